"""Writes random forests in XGBoost's JSON model format, its UBJSON form and its legacy binary format
(xgboost itself is not installable here) with predictions by an independent
evaluator: a recursive walk of the JSON, following XGBoost's documented rules (go left
when x < split_condition, in float32; NaN goes the default_left way; sum leaves, add the
base margin, apply the objective). Per case, in argv[1]/<name>: xgboost.json,
xgboost.ubj, xgboost.model, x.f32, expected.f64; the list of cases in argv[1]/cases.json."""
import json
import math
import os
import struct
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(11)
ROWS, FEATURES = 200, 6


def random_tree(depth):
    """Parallel arrays of a random tree, nodes numbered breadth first as XGBoost does."""
    nodes = [{"depth": 0}]
    i = 0
    while i < len(nodes):
        node = nodes[i]
        if node["depth"] < depth and (node["depth"] < 2 or rng.random() < 0.7):
            node["left"], node["right"] = len(nodes), len(nodes) + 1
            nodes += [{"depth": node["depth"] + 1}, {"depth": node["depth"] + 1}]
            node["feature"] = int(rng.integers(0, FEATURES))
            node["value"] = float(np.float32(rng.normal()))
            node["default_left"] = int(rng.integers(0, 2))
        else:
            node["left"] = node["right"] = -1
            node["feature"] = 0
            node["value"] = float(np.float32(rng.normal() * 0.3))
            node["default_left"] = 0
        i += 1
    n = len(nodes)
    return {
        "base_weights": [0.0] * n, "categories": [], "categories_nodes": [], "categories_segments": [], "categories_sizes": [],
        "default_left": [node["default_left"] for node in nodes], "id": 0,
        "left_children": [node["left"] for node in nodes], "loss_changes": [0.0] * n,
        "parents": [2147483647] + [0] * (n - 1), "right_children": [node["right"] for node in nodes],
        "split_conditions": [node["value"] for node in nodes], "split_indices": [node["feature"] for node in nodes],
        "split_type": [0] * n, "sum_hessian": [1.0] * n,
        "tree_param": {"num_deleted": "0", "num_feature": str(FEATURES), "num_nodes": str(n), "size_leaf_vector": "1"},
    }


def leaf(tree, row):
    node = 0
    while tree["left_children"][node] != -1:
        v = row[tree["split_indices"][node]]
        if math.isnan(v):
            node = tree["left_children"][node] if tree["default_left"][node] else tree["right_children"][node]
        elif np.float32(v) < np.float32(tree["split_conditions"][node]):
            node = tree["left_children"][node]
        else:
            node = tree["right_children"][node]
    return tree["split_conditions"][node]


def pascal(text):
    return struct.pack("<Q", len(text)) + text.encode()


def ubjson(value, key=None):
    """UBJSON as XGBoost writes it: big-endian, typed arrays for number lists."""
    if isinstance(value, dict):
        return b"{" + b"".join(ubj_string(k) + ubjson(v, k) for k, v in value.items()) + b"}"
    if isinstance(value, bool):
        return b"T" if value else b"F"
    if isinstance(value, int):
        return b"L" + struct.pack(">q", value)
    if isinstance(value, float):
        return b"D" + struct.pack(">d", value)
    if isinstance(value, str):
        return b"S" + ubj_string(value)
    if value and all(isinstance(v, float) for v in value):
        return b"[$d#L" + struct.pack(">q", len(value)) + struct.pack(f">{len(value)}f", *value)
    if value and all(isinstance(v, int) for v in value):
        kind = b"U" if key == "default_left" else b"l"
        return b"[$" + kind + b"#L" + struct.pack(">q", len(value)) + struct.pack(f">{len(value)}{'B' if kind == b'U' else 'i'}", *value)
    return b"[" + b"".join(ubjson(v) for v in value) + b"]"


def ubj_string(text):
    data = text.encode()
    return b"l" + struct.pack(">i", len(data)) + data


def legacy_binary(document):
    """The same model in XGBoost's legacy binary layout (learner.cc, gbtree_model.cc)."""
    learner = document["learner"]
    params = learner["learner_model_param"]
    booster = learner["gradient_booster"]
    model = booster["gbtree"]["model"] if booster["name"] == "dart" else booster["model"]
    trees = model["trees"]
    out = b"binf"
    out += struct.pack("<fIiiiIII", float(params["base_score"].strip("[]")), int(params["num_feature"]), int(params["num_class"]), 0, 0, 1, 7, 1) + bytes(136 - 32)
    out += pascal(learner["objective"]["name"]) + pascal(booster["name"])
    out += struct.pack("<iiiiqii", len(trees), 1, int(params["num_feature"]), 0, 0, max(1, int(params["num_class"])), 0) + bytes(160 - 32)
    for tree in trees:
        n = len(tree["left_children"])
        out += struct.pack("<iiiiii", 1, n, 0, 0, int(params["num_feature"]), 0) + bytes(148 - 24)
        for i in range(n):
            sindex = tree["split_indices"][i] | (0x80000000 if tree["default_left"][i] else 0)
            parent = -1 if i == 0 else 0
            out += struct.pack("<iiiIf", parent, tree["left_children"][i], tree["right_children"][i], sindex, tree["split_conditions"][i])
        out += bytes(16 * n)
    out += struct.pack(f"<{len(trees)}i", *model["tree_info"])
    if booster["name"] == "dart":
        out += struct.pack("<Q", len(booster["weight_drop"])) + struct.pack(f"<{len(booster['weight_drop'])}f", *booster["weight_drop"])
    return out


def case(name, objective, num_class, base_score, trees_per_group=8, dart=False):
    groups = max(1, num_class)
    trees = [random_tree(4) for _ in range(trees_per_group * groups)]
    for i, tree in enumerate(trees):
        tree["id"] = i
    tree_info = [i % groups for i in range(len(trees))]
    weights = [float(np.float32(w)) for w in rng.uniform(0.5, 1.0, size=len(trees))] if dart else [1.0] * len(trees)
    model = {"gbtree_model_param": {"num_parallel_tree": "1", "num_trees": str(len(trees))}, "iteration_indptr": list(range(0, len(trees) + 1, groups)), "tree_info": tree_info, "trees": trees}
    booster = {"name": "dart", "gbtree": {"name": "gbtree", "model": model}, "weight_drop": weights} if dart else {"name": "gbtree", "model": model}
    document = {
        "learner": {
            "attributes": {}, "feature_names": [], "feature_types": [], "gradient_booster": booster,
            "learner_model_param": {"base_score": base_score, "boost_from_average": "1", "num_class": str(num_class), "num_feature": str(FEATURES), "num_target": "1"},
            "objective": {"name": objective},
        },
        "version": [2, 1, 0],
    }
    x = rng.normal(size=(ROWS, FEATURES)).astype(np.float32)
    x[rng.random(size=x.shape) < 0.15] = np.nan
    # Some values exactly on a threshold, where < and <= differ.
    x[::5, trees[0]["split_indices"][0]] = np.float32(trees[0]["split_conditions"][0])
    base = float(base_score.strip("[]"))
    margin0 = -math.log(1 / base - 1) if objective == "binary:logistic" else math.log(base) if objective == "count:poisson" else base
    margins = np.full((ROWS, groups), margin0)
    for tree, group, weight in zip(trees, tree_info, weights):
        for r in range(ROWS):
            margins[r, group] += weight * leaf(tree, x[r])
    if objective == "binary:logistic":
        expected = 1 / (1 + np.exp(-margins))
    elif objective == "count:poisson":
        expected = np.exp(margins)
    elif objective == "multi:softprob":
        e = np.exp(margins - margins.max(axis=1, keepdims=True))
        expected = e / e.sum(axis=1, keepdims=True)
    else:
        expected = margins
    directory = os.path.join(out, name)
    os.makedirs(directory)
    with open(os.path.join(directory, "xgboost.json"), "w") as f:
        json.dump(document, f)
    with open(os.path.join(directory, "xgboost.ubj"), "wb") as f:
        f.write(ubjson(document))
    with open(os.path.join(directory, "xgboost.model"), "wb") as f:
        f.write(legacy_binary(document))
    x.tofile(os.path.join(directory, "x.f32"))
    expected.astype(np.float64).tofile(os.path.join(directory, "expected.f64"))
    return {"name": name, "rows": ROWS, "features": FEATURES, "width": groups}


cases = [
    case("regression", "reg:squarederror", 0, "5E-1"),
    case("binary", "binary:logistic", 0, "3E-1"),
    case("multiclass", "multi:softprob", 4, "[5E-1]"),
    case("poisson", "count:poisson", 0, "2E0"),
    case("dart", "reg:squarederror", 0, "0", dart=True),
]
with open(os.path.join(out, "cases.json"), "w") as manifest:
    json.dump(cases, manifest)
