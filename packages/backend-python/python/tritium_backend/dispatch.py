"""The Stub: its state, the frame dispatch, the work queue and the main loop."""

import inspect as _inspect
import os
import queue as _queue
import threading

from .arena import Arena, RegionMap
from .bls import Bls
from .execute import Execution
from .faults import format_exception
from .packing import Packing
from .telemetry import Telemetry
from .transport import LEAD, Reader, Transport


class Stub(Transport, Packing, Execution, Bls, Telemetry):
    """One model instance's stub; `connection.current()` while it runs."""

    def __init__(self, model_file, shm_dir, prefix, arena_sizes):
        self.model_file = os.path.abspath(model_file)
        self.model_dir = os.path.dirname(self.model_file)
        self.shm_dir = shm_dir
        self.prefix = prefix
        self.arena = Arena(shm_dir, prefix, "p", drain=self.poll, **arena_sizes)
        self.regions = RegionMap(shm_dir)
        self._wlock = threading.Lock()
        self.reader = Reader(self)
        self.main_ident = threading.get_ident()
        self.work = _queue.SimpleQueue()
        self.live = {}           # rid -> InferenceRequest, until its answer is sent
        self.calls = {}          # call id -> Call
        self._call_ids = iter(range(1, 1 << 62))
        self._call_lock = threading.Lock()
        self.model_cls = None
        self.model = None
        self.model_name = ""
        self.model_version = -1
        self.decoupled = False
        self.loop = None
        self._bg = set()         # background tasks (async decoupled executes)
        self._loop_waiting = False
        self._wake_fut = None

    def _dispatch(self, msg):
        t = msg["t"]
        if t == "execute":
            try:
                msg["requests"] = [self._incoming(r) for r in msg["requests"]]
            except Exception as e:
                for r in msg["requests"]:
                    if isinstance(r, dict):
                        self.live.pop(r.get("rid"), None)
                err = {"code": "INTERNAL",
                       "message": "cannot read the execute frame: %s" % format_exception(e)}
                if self.decoupled:
                    self.send({"t": "executed", "batch": msg["batch"], "error": err})
                else:
                    self.send({"t": "responses", "batch": msg["batch"], "error": err})
                return
            self._queue_work(msg)
        elif t == "free":
            self.arena.free(msg["leases"])
        elif t == "cancel":
            req = self.live.get(msg["rid"])
            if req is not None:
                req._cancelled = True
        elif t == "bls_response":
            self._on_bls_response(msg)
        elif t == "call_result":
            call = self.calls.pop(msg["call"], None)
            if call is not None:
                call.q.put((msg.get("value"), msg.get("error")))
        elif t in ("init", "auto_complete", "is_ready", "finalize"):
            self._queue_work(msg)
        else:
            self.log("WARNING", "tritium stub: unknown frame %r ignored" % (t,))

    def _queue_work(self, msg):
        self.work.put(msg)
        if self._loop_waiting:
            if threading.get_ident() == self.main_ident:
                self._wake()
            else:
                self.loop.call_soon_threadsafe(self._wake)

    # ------------------------------------------------------------ main loop

    def serve(self):
        handlers = {
            "execute": self._execute,
            "init": self._init,
            "auto_complete": self._auto_complete,
            "is_ready": self._is_ready,
            "finalize": self._finalize,
        }
        wait = self.reader.wait
        work = self.work
        while True:
            msg = self._wait_in_loop() if self._bg else wait(work)
            handlers[msg["t"]](msg)

    def _wake(self):
        fut = self._wake_fut
        if fut is not None and not fut.done():
            fut.set_result(None)

    def _wait_in_loop(self):
        """Wait for work while running the event loop (background tasks)."""
        loop = self.loop
        work = self.work
        self._loop_waiting = True
        try:
            while True:
                try:
                    msg = work.get_nowait()
                except _queue.Empty:
                    pass
                else:
                    if msg is not LEAD:
                        return msg
                    continue
                if not self._bg:
                    return self.reader.wait(work)
                fut = self._wake_fut = loop.create_future()
                if not work.empty():
                    continue
                self._run_coroutine(fut)
        finally:
            self._loop_waiting = False
            self._wake_fut = None

    def _on_loop_readable(self):
        """The event loop's reader for fd 3 (registered once, so it also
        serves a model that runs this loop itself). It takes the read role
        only for this call: while a coroutine blocks (a join, a sync BLS
        call) other threads can still read."""
        rd = self.reader
        if rd.lock.acquire(False):
            try:
                # check again: a poll() in between may have emptied it
                if rd.readable():
                    rd.read_once()
            finally:
                rd.release()
        # else: the thread holding the role reads it

    def _run_coroutine(self, coro):
        return self.loop.run_until_complete(coro)

    def _call_model(self, fn, *args):
        ret = fn(*args)
        if _inspect.isawaitable(ret):
            ret = self._run_coroutine(ret)
        return ret
