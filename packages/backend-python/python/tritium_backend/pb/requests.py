"""Requests, responses, response senders, BLS response iterators and the
request/config helpers."""

import asyncio as _asyncio
import json as _json
import threading as _threading

from .. import connection as _connection
from .errors import TritonError, TritonModelException, _require_stub
from .tensor import Tensor
from .types import (TRITONSERVER_REQUEST_RELEASE_ALL, TRITONSERVER_REQUEST_RELEASE_RESCHEDULE,
                    TRITONSERVER_RESPONSE_COMPLETE_FINAL)


def get_input_tensor_by_name(inference_request, name):
    for t in inference_request.inputs():
        if t._name == name:
            return t
    return None


def get_output_tensor_by_name(inference_response, name):
    for t in inference_response.output_tensors():
        if t._name == name:
            return t
    return None


def get_input_config_by_name(model_config, name):
    for props in model_config.get("input", ()) or ():
        if props.get("name") == name:
            return props
    return None


def get_output_config_by_name(model_config, name):
    for props in model_config.get("output", ()) or ():
        if props.get("name") == name:
            return props
    return None


def using_decoupled_model_transaction_policy(model_config):
    policy = model_config.get("model_transaction_policy")
    if policy:
        return bool(policy.get("decoupled", False))
    return False


def get_model_dir():
    """The model's version directory (where model.py is)."""
    return _require_stub("get_model_dir()").model_dir


# --------------------------------------------------------------------------
# Parameters (request and response): a dict of str -> bool | int | str,
# returned by parameters() as a JSON string, as Triton does.


def _check_parameters(parameters):
    if parameters is None:
        return {}
    if not isinstance(parameters, dict):
        raise TritonModelException("parameters must be a dictionary")
    for k, v in parameters.items():
        if not isinstance(k, str):
            raise TritonModelException(
                "Expect parameters keys to have type str, found type %s" % type(k).__name__)
        if not isinstance(v, (bool, int, str)):
            raise TritonModelException(
                "Expect parameters values to have type bool/int/str, found type %s"
                % type(v).__name__)
    return dict(parameters)


def _as_str(value, what):
    """What pybind11 makes a std::string argument of: a str (numpy.str_ too),
    or bytes (numpy.bytes_, e.g. a BYTES tensor's element) read as UTF-8."""
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8")
    raise TypeError("%s must be str or bytes, not %s" % (what, type(value).__name__))


# --------------------------------------------------------------------------
# Requests, responses, senders


class PreferredMemory:
    def __init__(self, preferred_memory_type, preferred_device_id=0):
        self.preferred_memory_type = preferred_memory_type
        self.preferred_device_id = preferred_device_id


class InferenceTrace:
    """The trace of a request given to execute(): a BLS request made with
    trace=request.trace() is traced as that request's child, as in Triton."""

    __slots__ = ("_rid",)

    def __init__(self, _rid=None):
        self._rid = _rid

    def get_context(self):
        return None


class InferenceRequest:
    """A request given to execute(), or a BLS request a model builds.

    BLS: InferenceRequest(model_name=..., inputs=[Tensor...],
    requested_output_names=[...], request_id="", correlation_id=0,
    model_version=-1, flags=0, timeout=0 (microseconds), preferred_memory,
    trace, parameters=None) then exec() / async_exec()."""

    __slots__ = (
        "_rid", "_request_id", "_correlation_id", "_inputs", "_requested",
        "_model_name", "_model_version", "_flags", "_timeout", "_priority",
        "_params", "_params_json", "_preferred_memory", "_trace",
        "_sender", "_cancelled", "_release_flags", "__weakref__",
    )

    def __init__(self, request_id="", correlation_id=0, inputs=None,
                 requested_output_names=None, model_name=None,
                 model_version=-1, flags=0, timeout=0, preferred_memory=None,
                 trace=None, parameters=None):
        if inputs is None:
            raise TypeError("InferenceRequest: 'inputs' is required")
        if requested_output_names is None:
            raise TypeError("InferenceRequest: 'requested_output_names' is required")
        if model_name is None:
            raise TypeError("InferenceRequest: 'model_name' is required")
        # A str is a sequence too, but pybind11 takes only a list of names.
        if isinstance(requested_output_names, (str, bytes, bytearray)):
            raise TypeError("requested_output_names must be a list of str, not %s"
                            % type(requested_output_names).__name__)
        if isinstance(correlation_id, bool) or not isinstance(correlation_id, (int, str)):
            raise TritonModelException("Correlation ID must be integer or string")
        if isinstance(correlation_id, int) and not 0 <= correlation_id < 1 << 64:
            raise TritonModelException("Correlation ID must be an unsigned 64-bit integer")
        inputs = list(inputs)
        for t in inputs:
            if not isinstance(t, Tensor):
                raise TypeError("InferenceRequest inputs must be pb_utils.Tensor objects, found %s"
                                % type(t).__name__)
        self._rid = None
        self._request_id = _as_str(request_id, "request_id")
        self._correlation_id = correlation_id
        self._inputs = inputs
        self._requested = [_as_str(n, "requested_output_names[]") for n in requested_output_names]
        self._model_name = _as_str(model_name, "model_name")
        self._model_version = int(model_version)
        self._flags = int(flags)
        self._timeout = int(timeout)
        self._priority = 0
        self._params = _check_parameters(parameters)
        self._params_json = None
        self._preferred_memory = preferred_memory
        self._trace = trace
        self._sender = None
        self._cancelled = False
        self._release_flags = TRITONSERVER_REQUEST_RELEASE_ALL

    @classmethod
    def _incoming(cls, rid, request_id, correlation_id, inputs, requested,
                  params, flags, timeout, priority, model_name, model_version):
        r = object.__new__(cls)
        r._rid = rid
        r._request_id = request_id
        r._correlation_id = correlation_id
        r._inputs = inputs
        r._requested = requested
        r._model_name = model_name
        r._model_version = model_version
        r._flags = flags
        r._timeout = timeout
        r._priority = priority
        r._params = params
        r._params_json = None
        r._preferred_memory = None
        r._trace = None
        r._sender = None
        r._cancelled = False
        r._release_flags = TRITONSERVER_REQUEST_RELEASE_ALL
        return r

    def inputs(self):
        return self._inputs

    def request_id(self):
        return self._request_id

    def correlation_id(self):
        return self._correlation_id

    def flags(self):
        return self._flags

    def set_flags(self, flags):
        self._flags = int(flags)

    def timeout(self):
        return self._timeout

    def priority(self):
        return self._priority

    def parameters(self):
        s = self._params_json
        if s is None:
            s = self._params_json = _json.dumps(self._params or {})
        return s

    def trace(self):
        if self._trace is not None:
            return self._trace
        return InferenceTrace(self._rid)

    def requested_output_names(self):
        return self._requested

    def model_name(self):
        return self._model_name

    def model_version(self):
        return self._model_version

    def get_response_sender(self):
        s = self._sender
        if s is None:
            if self._rid is None:
                raise TritonModelException(
                    "get_response_sender() is only available on requests given to execute()")
            s = self._sender = InferenceResponseSender(self)
        return s

    def is_cancelled(self):
        if not self._cancelled and self._rid is not None:
            s = _connection.current()
            if s is not None:
                s.poll()   # handle a cancel frame that may be waiting in the pipe
        return self._cancelled

    def set_release_flags(self, flags):
        if flags == TRITONSERVER_REQUEST_RELEASE_ALL:
            self._release_flags = flags
            return
        if flags == TRITONSERVER_REQUEST_RELEASE_RESCHEDULE:
            raise TritonModelException(
                "request rescheduling (TRITONSERVER_REQUEST_RELEASE_RESCHEDULE) "
                "is not supported by Tritium")
        raise TritonModelException("unknown request release flags %r" % (flags,))

    def exec(self, decoupled=False):
        """Run this request on model_name and wait. decoupled=False: one
        InferenceResponse. decoupled=True: an iterator of InferenceResponse
        that ends after the model's final response."""
        return _require_stub("BLS exec()").bls_exec(self, bool(decoupled))

    # Triton before 23.03 called the decoupled form stream_exec()
    def stream_exec(self):
        return self.exec(decoupled=True)

    def async_exec(self, decoupled=False):
        """Awaitable form of exec(): resolves to an InferenceResponse, or with
        decoupled=True to a ResponseIterator (once the first response is in;
        iterating it waits for the rest). Call it from a coroutine (or with
        the thread's current loop set, which then must run the awaitable)."""
        try:
            loop = _asyncio.get_running_loop()
        except RuntimeError:
            loop = _asyncio.get_event_loop_policy().get_event_loop()
        return _require_stub("BLS async_exec()").bls_async_exec(self, bool(decoupled), loop)


class InferenceResponse:
    __slots__ = ("_outputs", "_error", "_params", "_params_json")

    def __init__(self, output_tensors=None, error=None, parameters=None):
        if output_tensors is None:
            output_tensors = []
        elif not isinstance(output_tensors, list):
            if isinstance(output_tensors, (tuple,)):
                output_tensors = list(output_tensors)
            else:
                raise TritonModelException('"output_tensors" must be a list.')
        for t in output_tensors:
            if not isinstance(t, Tensor):
                raise TypeError("InferenceResponse output_tensors must be pb_utils.Tensor "
                                "objects, found %s" % type(t).__name__)
        if error is not None and not isinstance(error, TritonError):
            raise TypeError("InferenceResponse error must be a pb_utils.TritonError")
        self._outputs = output_tensors
        self._error = error
        self._params = _check_parameters(parameters) if parameters else None
        self._params_json = None

    @classmethod
    def _make(cls, outputs, error, params=None):
        r = object.__new__(cls)
        r._outputs = outputs
        r._error = error
        r._params = params
        r._params_json = None
        return r

    def output_tensors(self):
        return self._outputs

    def has_error(self):
        return self._error is not None

    def error(self):
        return self._error

    def parameters(self):
        s = self._params_json
        if s is None:
            s = self._params_json = _json.dumps(self._params or {})
        return s


class InferenceResponseSender:
    """Sends responses for one request given to execute()."""

    __slots__ = ("_request", "_closed", "_sent", "_done", "_lock")

    def __init__(self, request):
        self._request = request
        self._closed = False
        self._sent = None      # default (non-decoupled) mode: the one response sent
        self._done = False     # default mode: execute() has returned for the batch
        self._lock = _threading.Lock()

    def send(self, response=None, flags=0):
        if flags != TRITONSERVER_RESPONSE_COMPLETE_FINAL and flags != 0:
            raise TritonModelException("Unable to send response. Unsupported flag provided.")
        if response is not None and not isinstance(response, InferenceResponse):
            raise TypeError("send() takes a pb_utils.InferenceResponse, found %s"
                            % type(response).__name__)
        if flags == 0 and response is None:
            raise TritonModelException(
                "Inference Response object must be provided when the response flags is "
                "set to zero.")
        with self._lock:
            if self._closed:
                raise TritonModelException(
                    "Unable to send response. Response sender has been closed.")
            final = flags == TRITONSERVER_RESPONSE_COMPLETE_FINAL
            _require_stub("InferenceResponseSender.send()").sender_send(
                self, self._request, response, final)
            if final:
                self._closed = True

    def is_cancelled(self):
        return self._request.is_cancelled()


class ResponseIterator:
    """The responses of a decoupled BLS call, ending after the final one."""

    def __init__(self, call):
        self._call = call
        self._done = False

    def __iter__(self):
        return self

    def __next__(self):
        if self._done:
            raise StopIteration
        resp = self._call.next_response()
        if resp is None:
            self._done = True
            raise StopIteration
        return resp

    def cancel(self):
        if not self._done:
            self._call.cancel()
