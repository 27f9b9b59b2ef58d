"""Model lifecycle (auto_complete, initialize, is_ready, finalize), execute,
and the responses of default and decoupled models."""

import asyncio as _asyncio
import inspect as _inspect
import json as _json

from .faults import Fault, exc_error, format_exception
from .pb.errors import TritonError, TritonModelException, _error_to_wire
from .pb.model_config import ModelConfig
from .pb.requests import (InferenceResponse, InferenceResponseSender,
                          using_decoupled_model_transaction_policy)
from .pb.types import TRITONSERVER_RESPONSE_COMPLETE_FINAL


class Execution:
    """The handlers of the work frames, run by the main thread, and the response sender."""

    @staticmethod
    def _filtered(req, outputs):
        wanted = req._requested
        if not wanted:
            return outputs
        return [t for t in outputs if t._name in wanted]

    @staticmethod
    def _with_params(entry, response):
        if response is not None and response._params:
            entry["parameters"] = response._params
        return entry

    def _answer(self, frame, work):
        """Sends `frame` with the fields `work()` returns, or with the error it raised."""
        try:
            frame.update(work() or {})
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            frame["error"] = exc_error(e)
        self.send(frame)

    def _auto_complete(self, msg):
        def work():
            mc = ModelConfig(msg.get("config") or {})
            fn = getattr(self.model_cls, "auto_complete_config", None)
            if fn is not None:
                mc = self._call_model(fn, mc)
            if not isinstance(mc, ModelConfig):
                name = (msg.get("config") or {}).get("name", "")
                raise Fault("auto_complete_config function in model '%s' must return a "
                             "valid pb.ModelConfig object." % name)
            return {"config": mc.as_dict()}
        self._answer({"t": "auto_completed"}, work)

    def _init(self, msg):
        def work():
            args = msg.get("args") or {}
            cfg = _json.loads(args.get("model_config") or "{}")
            self.decoupled = using_decoupled_model_transaction_policy(cfg)
            self.model_name = args.get("model_name") or cfg.get("name", "")
            try:
                self.model_version = int(args.get("model_version", -1))
            except (TypeError, ValueError):
                self.model_version = -1
            self.model = self.model_cls()
            init = getattr(self.model, "initialize", None)
            if init is not None:
                self._call_model(init, args)
            if not hasattr(self.model, "execute"):
                raise Fault("Python model %s does not implement `execute` method."
                             % self.model_file)
        self._answer({"t": "init_done"}, work)

    def _is_ready(self, msg):
        def work():
            fn = getattr(self.model, "is_ready", None)
            return {"ready": True if fn is None else bool(self._call_model(fn))}
        self._answer({"t": "ready_state", "call": msg["call"], "ready": False, "error": None}, work)

    def _finalize(self, msg):
        def work():
            fn = getattr(self.model, "finalize", None)
            if fn is not None:
                self._call_model(fn)
        self._answer({"t": "finalized", "error": None}, work)
        self._exit()

    def _execute(self, msg):
        batch = msg["batch"]
        reqs = msg["requests"]
        if self.decoupled:
            self._execute_decoupled(batch, reqs)
            return
        live = self.live
        try:
            ret = self.model.execute(reqs)
            if _inspect.isawaitable(ret):
                ret = self._run_coroutine(ret)
            answers = self._collect(reqs, ret)
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            for r in reqs:
                self._close_sender(r)
                live.pop(r._rid, None)
            self.send({"t": "responses", "batch": batch, "error": exc_error(e)})
            return
        groups = []
        for req, resp in answers:
            if resp is None or resp._error is not None:
                groups.append(())
            else:
                groups.append(self._filtered(req, resp._outputs))
        try:
            lease, refs = self._pack(groups)
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            for r in reqs:
                live.pop(r._rid, None)
            self.send({"t": "responses", "batch": batch, "error": exc_error(e)})
            return
        entries = []
        for (req, resp), outs in zip(answers, refs):
            live.pop(req._rid, None)
            if resp is None:
                entries.append({"outputs": [], "error": {
                    "code": "INTERNAL",
                    "message": "no response for this request: execute() gave None for it "
                               "and its response sender sent none"}})
            elif resp._error is not None:
                entries.append(self._with_params(
                    {"outputs": [], "error": _error_to_wire(resp._error)}, resp))
            else:
                entries.append(self._with_params({"outputs": outs, "error": None}, resp))
        self.send({"t": "responses", "batch": batch, "lease": lease, "responses": entries})

    def _collect(self, reqs, ret):
        """Validate execute()'s result (non-decoupled) -> [(request, response|None)]."""
        n = len(reqs)
        if ret is None:
            items = [None] * n
        else:
            if not isinstance(ret, list):
                raise Fault("Expected a list in the execute return, found type '%s'."
                             % type(ret))
            if len(ret) != n:
                raise Fault(
                    "Number of InferenceResponse objects do not match the number of "
                    "InferenceRequest objects. InferenceRequest(s) size is:%d, and "
                    "InferenceResponse(s) size is:%d" % (n, len(ret)))
            IR = InferenceResponse
            for item in ret:
                if item is not None and type(item) is not IR and not isinstance(item, IR):
                    raise Fault(
                        "Expected an 'InferenceResponse' object in the execute function "
                        "return list, found type '%s'." % type(item))
            items = ret
        out = []
        for req, resp in zip(reqs, items):
            sender = req._sender
            if sender is not None:
                with sender._lock:
                    sender._done = True
                    sent = sender._sent
                    if sent is not None:
                        if resp is not None:
                            raise Fault("Non-decoupled model cannot send more than one "
                                         "response.")
                        resp = sent
            out.append((req, resp))
        return out

    def _close_sender(self, req):
        s = req._sender
        if s is None:
            s = req._sender = InferenceResponseSender(req)
        s._closed = True

    def _execute_decoupled(self, batch, reqs):
        err = None
        try:
            ret = self.model.execute(reqs)
            if _inspect.iscoroutine(ret):
                task = self.loop.create_task(ret)
                self._bg.add(task)
                task.add_done_callback(lambda t, reqs=reqs: self._bg_done(t, reqs))
                ret = None
            if ret is not None:
                raise Fault("Python model '%s' is using the decoupled mode and the execute "
                             "function must return None." % self.model_name)
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            err = exc_error(e)
        if err is not None:
            # Node fails the batch's requests: no more sends for them.
            for r in reqs:
                self._close_sender(r)
                self.live.pop(r._rid, None)
        self.send({"t": "executed", "batch": batch, "error": err})

    def _bg_done(self, task, reqs):
        self._bg.discard(task)
        if not self._bg:
            self._wake()
        if task.cancelled():
            exc = _asyncio.CancelledError("execute() was cancelled")
        else:
            exc = task.exception()
        if exc is None:
            return
        message = format_exception(exc)
        self.log("ERROR", "async execute of model '%s' raised: %s" % (self.model_name, message))
        for r in reqs:
            s = r._sender
            if s is not None and s._closed:
                continue
            try:
                r.get_response_sender().send(
                    InferenceResponse(error=TritonError(message)),
                    TRITONSERVER_RESPONSE_COMPLETE_FINAL)
            except Exception:
                pass

    # ------------------------------------------------------- model-facing API

    def sender_send(self, sender, req, response, final):
        """InferenceResponseSender.send (called with sender._lock held)."""
        if not self.decoupled:
            if sender._done:   # execute() already returned for this batch
                if response is None and sender._sent is not None:
                    return     # the final flag after the response: nothing to send
                raise TritonModelException(
                    "the response sender of a non-decoupled model can only send until "
                    "execute() returns")
            if response is not None:
                if sender._sent is not None:
                    raise TritonModelException(
                        "Non-decoupled model cannot send more than one response.")
                sender._sent = response
            elif sender._sent is None:
                raise TritonModelException(
                    "Non-decoupled model cannot send complete final before sending a response.")
            return
        rid = req._rid
        lease = None
        outputs = None
        error = None
        if response is not None:
            if response._error is not None:
                error = _error_to_wire(response._error)
            else:
                lease, refs = self._pack([self._filtered(req, response._outputs)])
                outputs = refs[0]
        frame = {"t": "send", "rid": rid, "lease": lease, "outputs": outputs,
                 "error": error, "final": final}
        self._with_params(frame, response)
        if final:
            self.live.pop(rid, None)
        self.send(frame)
