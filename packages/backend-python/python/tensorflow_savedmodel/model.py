"""Serves a TensorFlow SavedModel as a Triton Python model (platform tensorflow_savedmodel).

The stub runs this file as the model; the server names the SavedModel directory in the
TRITIUM_SAVEDMODEL_PATH environment variable. Inputs and outputs are the chosen
signature's keys, as in Triton's TensorFlow backend.
"""

import json
import os
import sys

import numpy as np
import triton_python_backend_utils as pb_utils

try:
    import tensorflow as tf
except ImportError as missing:
    raise ImportError(
        "TensorFlow is not installed for %s: install it with '%s -m pip install tensorflow-cpu' (%s)"
        % (sys.executable, sys.executable, missing)) from None

SAVEDMODEL_PATH = "TRITIUM_SAVEDMODEL_PATH"
# The backend's defaultMaxBatchSize (Triton's default-max-batch-size).
DEFAULT_MAX_BATCH_SIZE = "TRITIUM_TF_DEFAULT_MAX_BATCH_SIZE"

# TensorFlow dtypes with a Triton datatype (config form).
_CONFIG_TYPES = {
    tf.bool: "TYPE_BOOL", tf.uint8: "TYPE_UINT8", tf.uint16: "TYPE_UINT16",
    tf.uint32: "TYPE_UINT32", tf.uint64: "TYPE_UINT64", tf.int8: "TYPE_INT8",
    tf.int16: "TYPE_INT16", tf.int32: "TYPE_INT32", tf.int64: "TYPE_INT64",
    tf.float16: "TYPE_FP16", tf.float32: "TYPE_FP32", tf.float64: "TYPE_FP64",
    tf.string: "TYPE_STRING",
}

# START/END/READY controls take the type of their false/true pair; CORRID names its own.
_CONTROL_PAIR_TYPES = (("int32_false_true", "TYPE_INT32"), ("fp32_false_true", "TYPE_FP32"), ("bool_false_true", "TYPE_BOOL"))


def _parameter(config, key, default):
    value = ((config.get("parameters") or {}).get(key) or {}).get("string_value")
    return value or default


def _thread_count(config, key):
    """TF_NUM_INTRA_THREADS or TF_NUM_INTER_THREADS: a non-negative integer; 0 (the default) lets TensorFlow choose."""
    text = _parameter(config, key, "0").strip()
    if not (text.isascii() and text.isdigit()):
        raise pb_utils.TritonModelException(
            "parameter '%s' must be a non-negative integer, not '%s'" % (key, text))
    return int(text)


def _configure_threads(config):
    """TensorFlow's op thread pools: sizes can only be set before the first op creates them."""
    tf.config.threading.set_intra_op_parallelism_threads(_thread_count(config, "TF_NUM_INTRA_THREADS"))
    tf.config.threading.set_inter_op_parallelism_threads(_thread_count(config, "TF_NUM_INTER_THREADS"))


def _signature(config):
    """The signature function TF_SIGNATURE_DEF names, from the MetaGraph TF_GRAPH_TAG names."""
    _configure_threads(config)
    path = os.environ[SAVEDMODEL_PATH]
    tag = _parameter(config, "TF_GRAPH_TAG", "serve")
    name = _parameter(config, "TF_SIGNATURE_DEF", "serving_default")
    loaded = tf.saved_model.load(path, tags=[tag])
    signatures = loaded.signatures
    if name not in signatures:
        raise pb_utils.TritonModelException(
            "the SavedModel '%s' has no signature '%s' (TF_SIGNATURE_DEF) under tag '%s'; it has: %s"
            % (path, name, tag, ", ".join(sorted(signatures.keys())) or "none"))
    # Keep `loaded` alive with the function: its variables belong to it.
    return loaded, signatures[name]


def _specs(function):
    """(inputs, outputs): TensorSpecs by signature key."""
    inputs = function.structured_input_signature[1]
    outputs = function.structured_outputs
    # By key, as a SignatureDef's maps are ordered.
    return ({key: inputs[key] for key in sorted(inputs)},
            {key: tf.TensorSpec.from_tensor(outputs[key]) if tf.is_tensor(outputs[key]) else outputs[key]
             for key in sorted(outputs)})


def _config_type(spec, role, key):
    config_type = _CONFIG_TYPES.get(spec.dtype)
    if config_type is None:
        raise pb_utils.TritonModelException(
            "%s '%s' of the signature has dtype %s, which has no Triton datatype"
            % (role, key, spec.dtype.name))
    return config_type


def _dims(spec):
    if spec.shape.rank is None:
        return None
    return [-1 if d is None else int(d) for d in spec.shape.as_list()]


class TritonPythonModel:
    @staticmethod
    def auto_complete_config(auto_complete_model_config):
        """Triton's TensorFlow auto-complete: max_batch_size, inputs and outputs (the server adds the dynamic batcher)."""
        config = auto_complete_model_config.as_dict()
        _loaded, function = _signature(config)
        inputs, outputs = _specs(function)
        everything = list(inputs.items()) + list(outputs.items())
        can_batch = all((_dims(s) or [0])[0] == -1 for _k, s in everything)
        max_batch_size = config.get("max_batch_size") or 0
        if max_batch_size > 0 and not can_batch:
            raise pb_utils.TritonModelException(
                "unable to autofill for '%s': the config sets max_batch_size %d but the signature "
                "'%s' has a tensor without a variable first dimension"
                % (config.get("name", ""), max_batch_size, _parameter(config, "TF_SIGNATURE_DEF", "serving_default")))
        batching = can_batch and _batch_hint(config, inputs, outputs)
        if max_batch_size == 0 and batching:
            auto_complete_model_config.set_max_batch_size(int(os.environ.get(DEFAULT_MAX_BATCH_SIZE, "4")))
        batching = (config.get("max_batch_size") or 0) > 0
        # The server supplies sequence controls and batch inputs: they are no config inputs.
        supplied = _supplied_inputs(config)
        _complete(config, "input", {k: v for k, v in inputs.items() if k not in supplied}, batching, listed_only=False)
        _complete(config, "output", outputs, batching, listed_only=bool(config.get("output")))
        return auto_complete_model_config

    def initialize(self, args):
        config = json.loads(args["model_config"])
        self.loaded, self.function = _signature(config)
        inputs, outputs = _specs(self.function)
        self.batching = (config.get("max_batch_size") or 0) > 0
        served_inputs = _matched(config.get("input"), inputs, "input", self.batching)
        optional = sorted(name for name, (entry, _spec) in served_inputs.items() if entry.get("optional"))
        if optional:
            raise pb_utils.TritonModelException(
                "the signature needs every input in each run, but the config makes these optional: %s" % ", ".join(optional))
        supplied = _supplied_inputs(config)
        missing = sorted(set(inputs) - set(served_inputs) - set(supplied))
        if missing:
            raise pb_utils.TritonModelException("the config lacks the signature's inputs: %s" % ", ".join(missing))
        self.input_types = {name: spec.dtype for name, (_entry, spec) in served_inputs.items()}
        for name, (role, data_type) in supplied.items():
            self.input_types[name] = _supplied_spec(name, role, data_type, inputs).dtype
        served_outputs = _matched(config.get("output"), outputs, "output", self.batching)
        self.output_types = {name: entry["data_type"] for name, (entry, _spec) in served_outputs.items()}
        # Outputs with a config reshape go back to the config's dims (Triton reports those).
        self.output_dims = {name: [int(d) for d in entry.get("dims") or []]
                            for name, (entry, _spec) in served_outputs.items() if entry.get("reshape") is not None}

    def execute(self, requests):
        arrays = [{name: pb_utils.get_input_tensor_by_name(r, name).as_numpy() for name in self.input_types}
                  for r in requests]
        if self.batching and len(requests) > 1 and _same_item_shapes(arrays):
            # One run for the whole batch, as Triton's backend does; then each request's rows.
            joined = {name: np.concatenate([a[name] for a in arrays]) for name in self.input_types}
            results = self._run(joined)
            sizes = [next(iter(a.values())).shape[0] for a in arrays]
            bounds = np.cumsum(sizes)[:-1]
            split = {name: np.split(value, bounds) for name, value in results.items()}
            return [_response({name: parts[i] for name, parts in split.items()}) for i in range(len(requests))]
        return [self._own_run(a) for a in arrays]

    def _own_run(self, arrays):
        """A request run on its own: what fails it fails no other request."""
        try:
            return _response(self._run(arrays))
        except Exception as error:
            return pb_utils.InferenceResponse(error=pb_utils.TritonError(str(error)))

    def _run(self, arrays):
        feeds = {name: tf.constant(value, dtype=self.input_types[name]) for name, value in arrays.items()}
        computed = self.function(**feeds)
        results = {name: computed[name].numpy() for name in self.output_types}
        if self.batching and arrays:
            _require_batch_rows(results, next(iter(arrays.values())).shape[0])
        return {name: self._shaped(name, value) for name, value in results.items()}

    def _shaped(self, name, value):
        dims = self.output_dims.get(name)
        if dims is None:
            return value
        return value.reshape(([value.shape[0]] if self.batching else []) + dims)


def _response(outputs):
    return pb_utils.InferenceResponse([pb_utils.Tensor(name, value) for name, value in outputs.items()])


def _require_batch_rows(results, rows):
    """Each request's rows are cut from the outputs: an output without one row per batched input row cannot be split."""
    for name, value in results.items():
        if value.ndim == 0 or value.shape[0] != rows:
            raise pb_utils.TritonModelException(
                "output '%s' has shape %s for a batch of %d rows: its first dimension must be the batch"
                % (name, list(value.shape), rows))


def _same_item_shapes(arrays):
    first = arrays[0]
    return all(a[name].shape[1:] == first[name].shape[1:] for a in arrays for name in first)


def _matched(entries, specs, role, batching):
    """{name: (config entry, signature spec)} for the config's tensors; each must be in the signature with its dtype and shape."""
    matched = {}
    for entry in entries or []:
        spec = specs.get(entry["name"])
        if spec is None:
            raise pb_utils.TritonModelException(
                "%s '%s' is not in the signature; its %ss are: %s" % (role, entry["name"], role, ", ".join(specs)))
        _check_type(entry["name"], entry.get("data_type"), spec, role)
        _check_shape(entry, spec, role, batching)
        matched[entry["name"]] = (entry, spec)
    return matched


def _supplied_inputs(config):
    """{name: (role, config data_type)} of the inputs the server adds to each request: the
    sequence batcher's controls and the batch inputs."""
    supplied = {}
    for entry in (config.get("sequence_batching") or {}).get("control_input") or []:
        for control in entry.get("control") or []:
            data_type = next((t for key, t in _CONTROL_PAIR_TYPES if control.get(key)), control.get("data_type"))
            supplied[entry["name"]] = ("sequence control", data_type)
    for entry in config.get("batch_input") or []:
        for name in entry.get("target_name") or []:
            supplied[name] = ("batch input", entry.get("data_type"))
    return supplied


def _supplied_spec(name, role, data_type, specs):
    """The signature's spec for an input the server supplies: there, with the type the server gives it."""
    spec = specs.get(name)
    if spec is None:
        raise pb_utils.TritonModelException(
            "%s '%s' is not in the signature; its inputs are: %s" % (role, name, ", ".join(specs)))
    _check_type(name, data_type, spec, role)
    return spec


def _check_type(name, given, spec, role):
    expected = _config_type(spec, role, name)
    if given != expected:
        raise pb_utils.TritonModelException(
            "%s '%s' has data_type %s in the config but %s (%s) in the signature"
            % (role, name, given, expected, spec.dtype.name))


def _model_shape(entry):
    """The shape a config tensor has in the model, without the batch dimension: its reshape where given, else its dims."""
    reshape = entry.get("reshape")
    dims = (reshape.get("shape") or []) if reshape is not None else (entry.get("dims") or [])
    return [int(d) for d in dims]


def _check_shape(entry, spec, role, batching):
    """Triton's check of a config shape (its reshape where given, after a -1 batch dimension when batching)
    against the signature: an input's unknown signature dimension takes any size, an output's must be -1 in the config."""
    expected = _dims(spec)
    if expected is None:
        return
    given = ([-1] if batching else []) + _model_shape(entry)
    exact = role == "output"
    if len(given) != len(expected) or any(e != g and (exact or e != -1) for e, g in zip(expected, given)):
        raise pb_utils.TritonModelException(
            "%s '%s' has shape %s in the config%s but %s in the signature"
            % (role, entry["name"], given, " (a -1 batch dimension, as max_batch_size > 0, then its dims)" if batching else "", expected))


def _batch_hint(config, inputs, outputs):
    """For a signature that can batch, whether the model does (what max_batch_size 0 leaves open):
    the config's listed shapes (reshape, else dims) say it (the signature's rank one more than
    them); with none listed, it does."""
    hint = None
    for key, specs in (("input", inputs), ("output", outputs)):
        for entry in config.get(key) or []:
            spec = specs.get(entry.get("name"))
            shape = _model_shape(entry)
            dims = None if spec is None else _dims(spec)
            if dims is None or not shape:
                continue
            says = len(dims) == len(shape) + 1
            if hint is not None and hint != says:
                raise pb_utils.TritonModelException(
                    "unable to autofill for '%s': the config's tensors disagree on whether the model batches"
                    % config.get("name", ""))
            hint = says
    return True if hint is None else hint


def _complete(config, key, specs, batching, listed_only):
    """Fills name, data_type and dims from the signature; with listed_only, only the tensors the config lists."""
    listed = {entry.get("name"): entry for entry in config.get(key) or []}
    names = [n for n in specs if n in listed] if listed_only else list(specs)
    completed = []
    for name in names:
        spec = specs[name]
        entry = dict(listed.get(name) or {"name": name})
        entry["data_type"] = entry.get("data_type") if entry.get("data_type") not in (None, "", "TYPE_INVALID") \
            else _config_type(spec, key, name)
        if not entry.get("dims"):
            dims = _dims(spec)
            if dims is None or len(dims) == 0:
                raise pb_utils.TritonModelException(
                    "unable to autofill %s '%s': its rank is %s in the signature (list it with dims in the config)"
                    % (key, name, "unknown" if dims is None else 0))
            dims = dims[1:] if batching else dims
            if not dims:
                dims = [1]
                entry["reshape"] = {"shape": []}
            entry["dims"] = dims
        completed.append(entry)
    # Tensors the config lists that the signature lacks stay, for initialize to name.
    completed += [entry for name, entry in listed.items() if name not in specs]
    config[key] = completed
