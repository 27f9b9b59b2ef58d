"""BLS calls (infer frames) and model control, from the model's side."""

import queue as _queue
import threading

from .pb.errors import TritonError, TritonModelException, _error_from_wire
from .pb.requests import InferenceResponse, InferenceTrace, ResponseIterator


class Call:
    """A BLS infer call or a model_control call waiting for its answer."""

    __slots__ = ("id", "q", "decoupled", "loop", "future", "resolved", "done", "stub")

    def __init__(self, stub, call_id, decoupled=False, loop=None, future=None):
        self.stub = stub
        self.id = call_id
        self.q = _queue.SimpleQueue()
        self.decoupled = decoupled
        self.loop = loop
        self.future = future
        self.resolved = False
        self.done = False

    # the thread that read the frame
    def deliver(self, resp, final):
        self.q.put((resp, final))
        fut = self.future
        if fut is not None and not self.resolved:
            self.resolved = True
            if self.decoupled:
                value = ResponseIterator(self)
            else:
                value = resp if resp is not None else InferenceResponse._make([], None)
            if threading.get_ident() == self.stub.main_ident:
                self.loop.call_soon(_resolve, fut, value)
            else:
                self.loop.call_soon_threadsafe(_resolve, fut, value)

    # caller's thread
    def next_response(self):
        """The next response, or None after the last one."""
        while not self.done:
            resp, final = self.stub.reader.wait(self.q)
            if final:
                self.done = True
            if resp is not None:
                return resp
        return None

    def cancel(self):
        if not self.done and self.id:
            self.stub.send({"t": "bls_cancel", "call": self.id})


def _resolve(fut, value):
    if not fut.done():
        fut.set_result(value)


class Bls:
    """BLS exec/async_exec and model control: calls that wait for Node's answer."""

    def _next_call_id(self):
        with self._call_lock:
            return next(self._call_ids)

    def _bls_start(self, req, decoupled, loop=None, future=None):
        """Send an infer frame; returns the Call, or an error InferenceResponse."""
        k = self._next_call_id()
        call = Call(self, k, decoupled, loop, future)
        self.calls[k] = call
        try:
            lease, refs = self._pack([req._inputs])
            cid = req._correlation_id
            frame = {"t": "infer", "call": k, "lease": lease, "model": req._model_name,
                     "version": req._model_version, "inputs": refs[0],
                     "outputs": list(req._requested), "parameters": req._params or {},
                     "correlation_id": cid, "flags": req._flags, "timeout": req._timeout,
                     "priority": req._priority, "request_id": req._request_id,
                     "decoupled": decoupled}
            if isinstance(req._trace, InferenceTrace) and req._trace._rid is not None:
                frame["trace"] = req._trace._rid
            if isinstance(cid, int) and cid >= (1 << 53):
                frame["correlation_id_str"] = str(cid)
        except Exception as e:
            self.calls.pop(k, None)
            return InferenceResponse._make(
                [], TritonError("BLS request failed: %s" % (e,)))
        self.send(frame)
        return call

    def _answered(self, resp, decoupled):
        """What exec() gives for a call that failed before it was sent."""
        if not decoupled:
            return resp
        call = Call(self, 0, True)
        call.q.put((resp, True))
        return ResponseIterator(call)

    def bls_exec(self, req, decoupled):
        call = self._bls_start(req, decoupled)
        if isinstance(call, InferenceResponse):
            return self._answered(call, decoupled)
        if decoupled:
            return ResponseIterator(call)
        resp = call.next_response()
        return resp if resp is not None else InferenceResponse._make([], None)

    def bls_async_exec(self, req, decoupled, loop):
        if loop is not self.loop:
            # a loop of the model's own thread: that thread may never read
            # fd 3, so wait in an executor thread (as Triton does)
            return loop.run_in_executor(None, self.bls_exec, req, decoupled)
        fut = loop.create_future()
        call = self._bls_start(req, decoupled, loop, fut)
        if isinstance(call, InferenceResponse):
            fut.set_result(self._answered(call, decoupled))
        return fut

    def _on_bls_response(self, msg):
        k = msg["call"]
        final = bool(msg.get("final", True))
        call = self.calls.pop(k, None) if final else self.calls.get(k)
        outputs = msg.get("outputs")
        err = msg.get("error")
        resp = None
        try:
            if outputs is not None or err is not None:
                tensors = self._received(outputs) if outputs else []
                resp = InferenceResponse._make(
                    tensors, _error_from_wire(err) if err else None,
                    msg.get("parameters") or None)
        except Exception as e:
            # The caller must hear something, or it would wait forever.
            resp = InferenceResponse._make(
                [], TritonError("reading the BLS response failed: %s" % e), None)
            final = True
            self.calls.pop(k, None)
        finally:
            lease = msg.get("lease")
            if lease is not None:
                self.send({"t": "free", "leases": [lease]})
        if call is not None:
            call.deliver(resp, final)

    def model_control(self, op, name, version, config, unload_dependents=False):
        k = self._next_call_id()
        call = Call(self, k)
        self.calls[k] = call
        frame = {"t": "model_control", "call": k, "op": op, "name": str(name),
                 "version": version, "config": config}
        if unload_dependents:
            frame["unload_dependents"] = True
        self.send(frame)
        value, error = self.reader.wait(call.q)
        if error:
            raise TritonModelException(error.get("message", "model control failed"))
        return value
