"""The FIL benchmark's model and LightGBM's own figures. `train DIR` trains a 500-tree
binary LightGBM model on 32 features and writes model.txt and a 1024-row input (x.f32)
into DIR; `measure DIR` loads them and prints JSON with LightGBM's predict() rows/s at
batch 1 and 1024 (its compiled code, with its default threads: every core; and with one
thread), one round each, for the benchmark to alternate with its own rounds."""
import json
import os
import sys
import time

import lightgbm as lgb
import numpy as np

mode, out = sys.argv[1], sys.argv[2]
if mode == "train":
    rng = np.random.default_rng(3)
    x = rng.normal(size=(20000, 32)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] * x[:, 2] + rng.normal(size=20000) * 0.3 > 0).astype(int)
    booster = lgb.train({"objective": "binary", "num_leaves": 31, "verbose": -1}, lgb.Dataset(x, y), 500)
    booster.save_model(os.path.join(out, "model.txt"))
    x[:1024].tofile(os.path.join(out, "x.f32"))
    sys.exit(0)

booster = lgb.Booster(model_file=os.path.join(out, "model.txt"))
batch = np.fromfile(os.path.join(out, "x.f32"), dtype=np.float32).reshape(1024, 32).astype(np.float64)


def rows_per_second(rows, calls, **options):
    data = batch[:rows]
    booster.predict(data, **options)
    start = time.perf_counter()
    for _ in range(calls):
        booster.predict(data, **options)
    return rows * calls / (time.perf_counter() - start)


print(json.dumps({
    "batch1": rows_per_second(1, 300),
    "batch1024": rows_per_second(1024, 20),
    "batch1_1thread": rows_per_second(1, 300, num_threads=1),
    "batch1024_1thread": rows_per_second(1024, 20, num_threads=1),
    "trees": booster.num_trees(),
}))
