"""Writes the SavedModels the TensorFlow tests serve, and TensorFlow's own outputs for them.

    python3 make_savedmodels.py <directory>

Each model goes to <directory>/<name>/1/model.savedmodel; <directory>/expected.json holds,
per model, the inputs used and the outputs TensorFlow itself computed from the saved files.
"""

import json
import os
import sys

import numpy as np
import tensorflow as tf


class AddSub(tf.Module):
    """Batchable: both signatures take [batch, 4] tensors."""

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="INPUT0"),
                                  tf.TensorSpec([None, 4], tf.float32, name="INPUT1")])
    def add_sub(self, INPUT0, INPUT1):
        return {"OUTPUT0": INPUT0 + INPUT1, "OUTPUT1": INPUT0 - INPUT1}

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="A"),
                                  tf.TensorSpec([None, 4], tf.float32, name="B")])
    def product(self, A, B):
        return {"PRODUCT": A * B}


class Strings(tf.Module):
    """BYTES in, BYTES and INT32 out, batchable."""

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="TEXT")])
    def serve(self, TEXT):
        return {"UPPER": tf.strings.upper(TEXT), "LENGTH": tf.strings.length(TEXT)}


class Fixed(tf.Module):
    """No variable first dimension: cannot batch. Holds a variable."""

    def __init__(self):
        super().__init__()
        self.scale = tf.Variable(tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], tf.float64))

    @tf.function(input_signature=[tf.TensorSpec([2, 3], tf.float64, name="X")])
    def serve(self, X):
        return {"Y": X * self.scale}


class Flatten(tf.Module):
    """A variable first dimension that is not the batch: [rows, 4] in, [rows * 4] out."""

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="X")])
    def serve(self, X):
        return {"FLAT": tf.reshape(X, [-1])}


# Signature key, TensorFlow dtype, two rows of two values (within float64's exact integers, as JSON carries them).
TYPED = [("B", tf.bool, [[True, False], [False, True]]), ("H", tf.float16, [[0.5, -1.25], [2.0, 65000.0]]),
         ("I8", tf.int8, [[-128, 5], [126, 0]]), ("U8", tf.uint8, [[0, 254], [7, 9]]),
         ("I16", tf.int16, [[-32768, 1], [2, 32766]]), ("U16", tf.uint16, [[0, 65534], [3, 4]]),
         ("I64", tf.int64, [[-2 ** 40, 3], [2 ** 40, 0]]), ("U32", tf.uint32, [[0, 2 ** 32 - 2], [5, 6]]),
         ("U64", tf.uint64, [[2 ** 40, 1], [0, 2 ** 52]])]


class Types(tf.Module):
    """One input per datatype Triton maps (beyond FP32/FP64/INT32/BYTES); each output is its input moved by one."""

    @tf.function(input_signature=[tf.TensorSpec([None, 2], dtype, name=key) for key, dtype, _ in TYPED])
    def serve(self, *tensors):
        return {key + "_OUT": tf.logical_not(t) if t.dtype == tf.bool else t + tf.ones_like(t)
                for (key, _dtype, _values), t in zip(TYPED, tensors)}


class Checked(tf.Module):
    """Fails on a negative input: an error TensorFlow raises at run time. No fixed item shape."""

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32, name="X")])
    def serve(self, X):
        with tf.control_dependencies([tf.debugging.assert_non_negative(X, message="X must not be negative")]):
            return {"ROOT": tf.sqrt(X)}


class Started(tf.Module):
    """A sequence model: doubles its input on the request that starts a sequence (START is a control)."""

    @tf.function(input_signature=[tf.TensorSpec([None, 1], tf.float32, name="INPUT"),
                                  tf.TensorSpec([None, 1], tf.int32, name="START")])
    def serve(self, INPUT, START):
        return {"OUTPUT": INPUT * tf.cast(1 + START, tf.float32)}


def v1_tagged(path):
    """A TF1-style SavedModel whose only MetaGraph has tag 'serve1' and signature 'serving2'."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.int32, [None, 3], name="x")
        y = tf.identity(x * 2 + 1, name="y")
        with tf.compat.v1.Session(graph=graph) as session:
            builder = tf.compat.v1.saved_model.Builder(path)
            signature = tf.compat.v1.saved_model.predict_signature_def({"IN": x}, {"OUT": y})
            builder.add_meta_graph_and_variables(session, ["serve1"], signature_def_map={"serving2": signature})
            builder.save()


def version_path(root, name):
    return os.path.join(root, name, "1", "model.savedmodel")


def outputs_of(path, inputs, tag="serve", signature="serving_default"):
    """What TensorFlow computes from the saved files."""
    function = tf.saved_model.load(path, tags=[tag]).signatures[signature]
    results = function(**{k: tf.constant(v) for k, v in inputs.items()})
    return {k: v.numpy() for k, v in results.items()}


def listed(arrays):
    """Arrays as JSON: a BYTES element as its list of byte values, so that any bytes survive."""
    return {k: ([list(b) for b in v.flat] if v.dtype.kind in "SO" else v.tolist()) for k, v in arrays.items()}


def main(root):
    rng = np.random.default_rng(7)
    add_sub = AddSub()
    tf.saved_model.save(add_sub, version_path(root, "add_sub"),
                        signatures={"serving_default": add_sub.add_sub, "product": add_sub.product})
    strings = Strings()
    tf.saved_model.save(strings, version_path(root, "strings"), signatures={"serving_default": strings.serve})
    fixed = Fixed()
    tf.saved_model.save(fixed, version_path(root, "fixed"), signatures={"serving_default": fixed.serve})
    flatten = Flatten()
    tf.saved_model.save(flatten, version_path(root, "flatten"), signatures={"serving_default": flatten.serve})
    types = Types()
    tf.saved_model.save(types, version_path(root, "types"), signatures={"serving_default": types.serve})
    checked = Checked()
    tf.saved_model.save(checked, version_path(root, "checked"), signatures={"serving_default": checked.serve})
    started = Started()
    tf.saved_model.save(started, version_path(root, "started"), signatures={"serving_default": started.serve})
    v1_tagged(version_path(root, "tagged"))

    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((3, 4)).astype(np.float32)
    text = np.array([b"tritium", b"", b"SavedModel", b"\xff\x00bin"], dtype=object)
    x = rng.standard_normal((2, 3))
    ints = np.arange(6, dtype=np.int32).reshape(2, 3)
    cases = {
        "add_sub": ({"INPUT0": a, "INPUT1": b}, {}),
        "product": ({"A": a, "B": b}, {"signature": "product", "model": "add_sub"}),
        "strings": ({"TEXT": text}, {}),
        "fixed": ({"X": x}, {}),
        "tagged": ({"IN": ints}, {"tag": "serve1", "signature": "serving2"}),
        "types": ({key: np.array(values, dtype=dtype.as_numpy_dtype) for key, dtype, values in TYPED}, {}),
    }
    expected = {}
    for case, (inputs, how) in cases.items():
        path = version_path(root, how.get("model", case))
        outs = outputs_of(path, inputs, how.get("tag", "serve"), how.get("signature", "serving_default"))
        expected[case] = {"inputs": listed(inputs), "outputs": listed(outs)}
    with open(os.path.join(root, "expected.json"), "w") as f:
        json.dump(expected, f)


if __name__ == "__main__":
    main(sys.argv[1])
