"""Trains small LightGBM models and writes, per case, model.txt, the inputs (x.f32,
float32 row-major) and LightGBM's own predictions (expected.f64), into argv[1],
with the list of cases in cases.json."""
import json
import os
import sys

import lightgbm as lgb
import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(7)
ROWS, FEATURES = 300, 5


def features(categorical=False):
    x = rng.normal(size=(ROWS, FEATURES)).astype(np.float32)
    x[rng.random(size=x.shape) < 0.1] = np.nan
    x[rng.random(size=x.shape) < 0.05] = 0.0
    if categorical:
        x[:, 0] = rng.integers(0, 40, size=ROWS)
        x[::11, 0] = np.nan
        x[::13, 0] = -1
        # LightGBM truncates a category to an int: -0.5 is category 0, 3.7 is 3.
        x[::17, 0] = -0.5
        x[1::19, 0] += 0.7
    return x


def case(name, params, label, categorical=False, rounds=12):
    x = features(categorical)
    y = label(np.nan_to_num(x))
    cats = [0] if categorical else []
    params = {"verbose": -1, "num_leaves": 8, "min_data_in_leaf": 5, "min_data_per_group": 5, "cat_smooth": 1, **params}
    booster = lgb.train(params, lgb.Dataset(x, y, categorical_feature=cats), rounds)
    directory = os.path.join(out, name)
    os.makedirs(directory)
    booster.save_model(os.path.join(directory, "model.txt"))
    x.tofile(os.path.join(directory, "x.f32"))
    # LightGBM reads the float32 inputs as doubles, as the backend does.
    expected = booster.predict(x.astype(np.float64)).astype(np.float64)
    expected.tofile(os.path.join(directory, "expected.f64"))
    return {"name": name, "rows": ROWS, "features": FEATURES, "width": 1 if expected.ndim == 1 else expected.shape[1]}


cases = [
    case("binary", {"objective": "binary"}, lambda x: (x[:, 0] + x[:, 1] > 0).astype(int)),
    case("binary_zero_missing", {"objective": "binary", "zero_as_missing": True}, lambda x: (x[:, 2] - x[:, 1] > 0).astype(int)),
    case("regression_no_missing", {"objective": "regression", "use_missing": False}, lambda x: x[:, 0] * 2 + x[:, 3]),
    case("regression", {"objective": "regression"}, lambda x: x[:, 0] * 2 + x[:, 3]),
    case("poisson", {"objective": "poisson"}, lambda x: np.round(np.exp(x[:, 1]))),
    case("gamma", {"objective": "gamma"}, lambda x: np.exp(x[:, 1]) + 0.1),
    case("regression_sqrt", {"objective": "regression", "reg_sqrt": True}, lambda x: np.abs(x[:, 0]) * 3),
    case("binary_sigmoid", {"objective": "binary", "sigmoid": 0.5}, lambda x: (x[:, 0] > 0).astype(int)),
    case("cross_entropy", {"objective": "cross_entropy"}, lambda x: 1 / (1 + np.exp(-x[:, 0]))),
    case("cross_entropy_lambda", {"objective": "cross_entropy_lambda"}, lambda x: 1 / (1 + np.exp(-x[:, 0]))),
    case("multiclass", {"objective": "multiclass", "num_class": 3}, lambda x: np.digitize(x[:, 0] + x[:, 4], [-0.5, 0.5])),
    case("multiclassova", {"objective": "multiclassova", "num_class": 3}, lambda x: np.digitize(x[:, 1], [-0.5, 0.5])),
    case("categorical", {"objective": "regression", "max_cat_to_onehot": 2}, lambda x: (x[:, 0] % 7) + x[:, 1], categorical=True),
    case("random_forest", {"objective": "binary", "boosting": "rf", "bagging_freq": 1, "bagging_fraction": 0.7}, lambda x: (x[:, 0] > 0).astype(int)),
    case("random_forest_multiclass", {"objective": "multiclass", "num_class": 3, "boosting": "rf", "bagging_freq": 1, "bagging_fraction": 0.7}, lambda x: np.digitize(x[:, 1], [-0.5, 0.5])),
]
# A file, not stdout: LightGBM prints its warnings there.
with open(os.path.join(out, "cases.json"), "w") as manifest:
    json.dump(cases, manifest)
