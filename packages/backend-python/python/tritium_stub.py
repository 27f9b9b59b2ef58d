"""Tritium's Python stub: one process per model instance (see PROTOCOL.md).

    python tritium_stub.py --model-file <versionDir>/model.py \
        --shm-dir <dir> --shm-prefix <prefix> \
        [--shm-first-bytes <n>] [--shm-growth-bytes <n>]

Frames (4-byte LE length + UTF-8 JSON) arrive on fd 3 and leave on fd 4;
tensor bytes live in shared-memory arenas (tritium_arena.py).

Reading fd 3 (see _Reader): there is no dedicated reader thread. Whichever
thread is waiting for a frame reads fd 3 for everyone ("leader/follower"):
the main thread while it waits for work, a BLS or model-control caller while
it waits for its answer, the asyncio loop (add_reader, when fd 3 is readable)
while the main thread runs it. Every frame is handled by the thread that read
it: cancel, free, bls_response and call_result at once; execute frames
become InferenceRequest objects (so a cancel never overtakes its request)
and go to the main thread's queue with init/auto_complete/is_ready/finalize.
While the main thread runs model code and nobody waits, frames stay in the
pipe; request.is_cancelled() and a full arena drain what is there without
blocking. This keeps the per-request path on one thread: a hand-off between
a reader thread and the main thread cost about 40 us per request (GIL and
wake-ups) in our tests. A watchdog thread blocks in poll() on fd 3 and sees
Node hang up even when no one reads.

`async def execute` runs on a persistent asyncio loop of the main thread;
while a decoupled model's async executes run in the background the main
thread waits for work by running that loop. Any thread may write a frame
(decoupled sends, BLS, logs): writes to fd 4 hold one lock, one frame per
write. End of file on fd 3: unlink <shm-dir>/<shm-prefix>* and exit at once.
"""

import json as _json
import json.encoder as _json_encoder
import os
import struct
import sys
import threading

FD_IN = 3
FD_OUT = 4


def _make_codec():
    """JSON encode/decode for frames. The stdlib's C encoder is built once
    (JSONEncoder.encode builds one per call) and frames are decoded with the
    scanner directly; both fall back to the plain API."""
    enc = _json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    c_make = getattr(_json_encoder, "c_make_encoder", None)
    if c_make is not None:
        # allow_nan=False: never emit NaN/Infinity, which JSON.parse refuses
        c_enc = c_make(None, enc.default, _json_encoder.encode_basestring, None,
                       ":", ",", False, False, False)

        def encode(obj):
            return "".join(c_enc(obj, 0))
    else:
        encode = enc.encode
    dec = _json.JSONDecoder()
    scan = dec.scan_once

    def decode(data):
        s = data.decode("utf-8")
        try:
            obj, end = scan(s, 0)
        except StopIteration:
            return dec.decode(s)
        if end != len(s):
            return dec.decode(s)  # trailing whitespace, or an error to report
        return obj
    return encode, decode


_encode, _decode = _make_codec()


def _write_all(data):
    view = memoryview(data)
    while view:
        n = os.write(FD_OUT, view)
        view = view[n:]


def _frame(obj):
    body = _encode(obj).encode("utf-8")
    return struct.pack("<I", len(body)) + body


def _parse_args(argv):
    opts = {"--model-file": None, "--shm-dir": None, "--shm-prefix": None,
            "--shm-first-bytes": None, "--shm-growth-bytes": None}
    optional = ("--shm-first-bytes", "--shm-growth-bytes")
    i = 0
    while i < len(argv):
        a = argv[i]
        if "=" in a and a.split("=", 1)[0] in opts:
            k, v = a.split("=", 1)
            opts[k] = v
            i += 1
        elif a in opts and i + 1 < len(argv):
            opts[a] = argv[i + 1]
            i += 2
        else:
            raise SystemExit("tritium_stub: unexpected argument %r" % a)
    missing = [k for k, v in opts.items() if not v and k not in optional]
    if missing:
        raise SystemExit("tritium_stub: missing %s" % ", ".join(missing))
    return opts


def _fatal(message, code="INTERNAL"):
    try:
        _write_all(_frame({"t": "fatal", "error": {"code": code, "message": message}}))
    except OSError:
        pass
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(1)


_OWN_FRAMES = (__file__, os.path.abspath(__file__), "<frozen importlib._bootstrap_external>",
               "<frozen importlib._bootstrap>")


def _format_exception(e):
    """An exception as one message: type and text first, then the traceback."""
    import traceback
    head = "%s: %s" % (type(e).__name__, e)
    tb = e.__traceback__
    # leave out the stub's own frames (and importlib's) above the model's
    while tb is not None and tb.tb_next is not None and (
            tb.tb_frame.f_code.co_filename in _OWN_FRAMES):
        tb = tb.tb_next
    tb = "".join(traceback.format_exception(type(e), e, tb))
    return head + "\n\n" + tb.rstrip("\n")


class _Fault(Exception):
    """A wrong execute() result; the message names the fault."""


def _exc_error(e):
    """An exception as a frame's error: a fault by its message alone, anything else with its traceback."""
    return {"code": "INTERNAL", "message": str(e) if isinstance(e, _Fault) else _format_exception(e)}


_LEAD = object()  # put in a waiting follower's queue: "no one reads fd 3 now"


class _Reader:
    """Reads fd 3 on behalf of whichever thread waits (see the module doc).

    A waiter waits on a SimpleQueue that the frames' handlers feed. It reads
    fd 3 itself when no one else does (it holds `lock` meanwhile); otherwise
    it is a follower and blocks on its queue, where the leader puts _LEAD when
    it stops reading so that a follower takes over."""

    def __init__(self, stub):
        self.stub = stub
        self.lock = threading.Lock()
        self.buf = b""
        self.flock = threading.Lock()
        self.followers = []        # objects with put(); get _LEAD on release
        self._poll = _select.poll()
        self._poll.register(FD_IN, _select.POLLIN)

    def wait(self, q):
        """The next item put in q (a SimpleQueue), reading fd 3 meanwhile
        whenever no other thread does."""
        get_nowait = q.get_nowait
        while True:
            try:
                item = get_nowait()
            except _queue.Empty:
                pass
            else:
                if item is not _LEAD:
                    return item
                continue
            if self.lock.acquire(False):
                try:
                    return self._lead(q)
                finally:
                    self.release()
            self._follow(q)
            try:
                if self.lock.acquire(False):
                    self._unfollow(q)
                    try:
                        return self._lead(q)
                    finally:
                        self.release()
                item = q.get()
            finally:
                self._unfollow(q)
            if item is not _LEAD:
                return item

    def _follow(self, f):
        with self.flock:
            self.followers.append(f)

    def _unfollow(self, f):
        with self.flock:
            try:
                self.followers.remove(f)
            except ValueError:
                pass

    def release(self):
        self.lock.release()
        if self.followers:
            with self.flock:
                fs = list(self.followers)
            for f in fs:
                f.put(_LEAD)

    def _lead(self, q):
        get_nowait = q.get_nowait
        read = self.read_once
        while True:
            try:
                item = get_nowait()
            except _queue.Empty:
                read()
                continue
            if item is not _LEAD:
                return item

    def readable(self):
        return bool(self._poll.poll(0))

    def poll(self):
        """Handle the frames already in the pipe, without blocking (no-op when
        another thread is reading: it handles them)."""
        if self.lock.acquire(False):
            try:
                while self.readable():
                    self.read_once()
            finally:
                self.release()

    def read_once(self):
        """One read() of fd 3 (blocks if nothing is there); handles every
        complete frame. Called only by the thread holding `lock`."""
        try:
            chunk = os.read(FD_IN, 1 << 16)
        except OSError:
            chunk = b""
        if not chunk:
            self.stub._peer_gone()
        buf = self.buf
        buf = buf + chunk if buf else chunk
        pos = 0
        end = len(buf)
        dispatch = self.stub._dispatch
        while end - pos >= 4:
            n = int.from_bytes(buf[pos:pos + 4], "little")
            if end - pos - 4 < n:
                break
            msg = _decode(buf[pos + 4:pos + 4 + n])
            pos += 4 + n
            try:
                dispatch(msg)
            except Exception as e:  # a bad frame must not stop the reading
                self.stub.log("ERROR", "tritium stub: cannot handle %r frame: %s"
                              % (msg.get("t") if isinstance(msg, dict) else msg,
                                 _format_exception(e)))
        self.buf = buf[pos:] if pos < end else b""


class _Call:
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
                value = _pb.ResponseIterator(self)
            else:
                value = resp if resp is not None else _pb.InferenceResponse._make([], None)
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


class Stub:
    def __init__(self, model_file, shm_dir, prefix, arena_sizes):
        self.model_file = os.path.abspath(model_file)
        self.model_dir = os.path.dirname(self.model_file)
        self.shm_dir = shm_dir
        self.prefix = prefix
        self.arena = _arena.Arena(shm_dir, prefix, "p", drain=self.poll, **arena_sizes)
        self.regions = _arena.RegionMap(shm_dir)
        self._wlock = threading.Lock()
        self.reader = _Reader(self)
        self.main_ident = threading.get_ident()
        self.work = _queue.SimpleQueue()
        self.live = {}           # rid -> InferenceRequest, until its answer is sent
        self.calls = {}          # call id -> _Call
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

    # ------------------------------------------------------------------ I/O

    def send(self, obj):
        data = _frame(obj)
        dropped = _pb._dropped_metrics
        if dropped:
            extra = []
            while dropped:
                try:
                    mid = dropped.popleft()
                except IndexError:
                    break
                extra.append(_frame({"t": "metric", "op": "drop", "id": mid}))
            data = b"".join(extra) + data
        try:
            with self._wlock:
                _write_all(data)
        except OSError:
            self._peer_gone()

    def _peer_gone(self):
        _arena.unlink_prefix(self.shm_dir, self.prefix)
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:
            pass
        os._exit(0)

    def poll(self):
        """Handle what is already in fd 3 without blocking (is_cancelled, a
        full arena)."""
        self.reader.poll()

    def watch_hangup(self):
        """Watchdog thread: poll() fd 3 for hang-up only (no reading)."""
        # Node's stdio "pipes" are socketpairs: its end closing for writing
        # shows as POLLRDHUP; POLLHUP/POLLERR/POLLNVAL are always reported
        rdhup = getattr(_select, "POLLRDHUP", 0)
        p = _select.poll()
        p.register(FD_IN, rdhup)
        gone = _select.POLLHUP | _select.POLLERR | _select.POLLNVAL | rdhup
        while True:
            for _fd, ev in p.poll():
                if ev & gone:
                    self._peer_gone()

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
                       "message": "cannot read the execute frame: %s" % _format_exception(e)}
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

    # ------------------------------------------------------------ tensors

    def _incoming(self, r):
        """An execute request R -> InferenceRequest (by the thread that read
        the frame). Inputs are zero-copy views of Node's region, made lazily."""
        inputs = []
        regions = self.regions
        Tensor_lazy = _pb.Tensor._lazy
        for t in r["inputs"]:
            nbytes = t["nbytes"]
            mm = regions.get(t["region"]) if nbytes else None
            inputs.append(Tensor_lazy(t["name"], t["datatype"],
                                      (mm, t["offset"], nbytes, t["shape"])))
        cid = r.get("correlation_id", 0)
        if "correlation_id_str" in r:
            try:
                cid = int(r["correlation_id_str"])
            except ValueError:
                cid = r["correlation_id_str"]
        req = _pb.InferenceRequest._incoming(
            r["rid"], r.get("request_id", ""), cid, inputs, r.get("requested") or [],
            r.get("parameters") or {}, r.get("flags", 0), r.get("timeout", 0),
            r.get("priority", 0), self.model_name, self.model_version)
        self.live[r["rid"]] = req
        return req

    def _received(self, refs):
        """Tensors of a bls_response, copied out of Node's region."""
        out = []
        for t in refs:
            wire = t["datatype"]
            nbytes = t["nbytes"]
            shape = t["shape"]
            if wire == "BYTES":
                if nbytes:
                    mm = self.regions.get(t["region"])
                    off = t["offset"]
                    arr = _pb.deserialize_bytes_tensor(memoryview(mm)[off:off + nbytes])
                else:
                    arr = _np.empty(0, dtype=_np.object_)
                arr = arr.reshape(shape)
            else:
                dt = _pb._WIRE_TO_NP[wire]
                if nbytes:
                    mm = self.regions.get(t["region"])
                    arr = _np.frombuffer(mm, dt, nbytes // dt.itemsize, t["offset"])
                    arr = arr.reshape(shape).copy()
                else:
                    arr = _np.zeros(shape, dt)
            out.append(_pb.Tensor._wrap(t["name"], wire, arr))
        return out

    def _pack(self, groups):
        """Copy the tensors of each group into Python's arena under one lease.
        Returns (lease, [[tensor refs] per group])."""
        sizes = []
        items = []
        for tensors in groups:
            for t in tensors:
                arr = t.as_numpy()
                if t._dt == "BYTES":
                    data = _pb.serialize_byte_tensor(arr)
                    if data is None:
                        data = arr.tobytes()
                    size = len(data)
                else:
                    data = arr
                    size = arr.nbytes
                items.append((t, arr, data, size))
                sizes.append(size)
        lease, places = self.arena.allocate(sizes)
        out = []
        k = 0
        for tensors in groups:
            refs = []
            for _ in tensors:
                t, arr, data, size = items[k]
                place = places[k]
                k += 1
                if place is None:
                    refs.append({"name": t._name, "datatype": t._dt, "shape": list(arr.shape),
                                 "region": "", "offset": 0, "nbytes": 0})
                    continue
                region, off = place
                if data is arr:
                    region.mv[off:off + size] = memoryview(arr.reshape(-1)).cast("B")
                else:
                    region.mv[off:off + size] = data
                refs.append({"name": t._name, "datatype": t._dt, "shape": arr.shape,
                             "region": region.name, "offset": off, "nbytes": size})
            out.append(refs)
        return lease, out

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
                    if msg is not _LEAD:
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

    # ------------------------------------------------------------ handlers

    def _answer(self, frame, work):
        """Sends `frame` with the fields `work()` returns, or with the error it raised."""
        try:
            frame.update(work() or {})
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            frame["error"] = _exc_error(e)
        self.send(frame)

    def _auto_complete(self, msg):
        def work():
            mc = _pb.ModelConfig(msg.get("config") or {})
            fn = getattr(self.model_cls, "auto_complete_config", None)
            if fn is not None:
                mc = self._call_model(fn, mc)
            if not isinstance(mc, _pb.ModelConfig):
                name = (msg.get("config") or {}).get("name", "")
                raise _Fault("auto_complete_config function in model '%s' must return a "
                             "valid pb.ModelConfig object." % name)
            return {"config": mc.as_dict()}
        self._answer({"t": "auto_completed"}, work)

    def _init(self, msg):
        def work():
            args = msg.get("args") or {}
            cfg = _json.loads(args.get("model_config") or "{}")
            self.decoupled = _pb.using_decoupled_model_transaction_policy(cfg)
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
                raise _Fault("Python model %s does not implement `execute` method."
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
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:
            pass
        os._exit(0)

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
            self.send({"t": "responses", "batch": batch, "error": _exc_error(e)})
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
            self.send({"t": "responses", "batch": batch, "error": _exc_error(e)})
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
                    {"outputs": [], "error": _pb._error_to_wire(resp._error)}, resp))
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
                raise _Fault("Expected a list in the execute return, found type '%s'."
                             % type(ret))
            if len(ret) != n:
                raise _Fault(
                    "Number of InferenceResponse objects do not match the number of "
                    "InferenceRequest objects. InferenceRequest(s) size is:%d, and "
                    "InferenceResponse(s) size is:%d" % (n, len(ret)))
            IR = _pb.InferenceResponse
            for item in ret:
                if item is not None and type(item) is not IR and not isinstance(item, IR):
                    raise _Fault(
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
                            raise _Fault("Non-decoupled model cannot send more than one "
                                         "response.")
                        resp = sent
            out.append((req, resp))
        return out

    def _close_sender(self, req):
        s = req._sender
        if s is None:
            s = req._sender = _pb.InferenceResponseSender(req)
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
                raise _Fault("Python model '%s' is using the decoupled mode and the execute "
                             "function must return None." % self.model_name)
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            err = _exc_error(e)
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
        message = _format_exception(exc)
        self.log("ERROR", "async execute of model '%s' raised: %s" % (self.model_name, message))
        for r in reqs:
            s = r._sender
            if s is not None and s._closed:
                continue
            try:
                r.get_response_sender().send(
                    _pb.InferenceResponse(error=_pb.TritonError(message)),
                    _pb.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
            except Exception:
                pass

    # ------------------------------------------------------- model-facing API

    def sender_send(self, sender, req, response, final):
        """InferenceResponseSender.send (called with sender._lock held)."""
        if not self.decoupled:
            if sender._done:   # execute() already returned for this batch
                if response is None and sender._sent is not None:
                    return     # the final flag after the response: nothing to send
                raise _pb.TritonModelException(
                    "the response sender of a non-decoupled model can only send until "
                    "execute() returns")
            if response is not None:
                if sender._sent is not None:
                    raise _pb.TritonModelException(
                        "Non-decoupled model cannot send more than one response.")
                sender._sent = response
            elif sender._sent is None:
                raise _pb.TritonModelException(
                    "Non-decoupled model cannot send complete final before sending a response.")
            return
        rid = req._rid
        lease = None
        outputs = None
        error = None
        if response is not None:
            if response._error is not None:
                error = _pb._error_to_wire(response._error)
            else:
                lease, refs = self._pack([self._filtered(req, response._outputs)])
                outputs = refs[0]
        frame = {"t": "send", "rid": rid, "lease": lease, "outputs": outputs,
                 "error": error, "final": final}
        self._with_params(frame, response)
        if final:
            self.live.pop(rid, None)
        self.send(frame)

    def _next_call_id(self):
        with self._call_lock:
            return next(self._call_ids)

    def _bls_start(self, req, decoupled, loop=None, future=None):
        """Send an infer frame; returns the _Call, or an error InferenceResponse."""
        k = self._next_call_id()
        call = _Call(self, k, decoupled, loop, future)
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
            if isinstance(cid, int) and cid >= (1 << 53):
                frame["correlation_id_str"] = str(cid)
        except Exception as e:
            self.calls.pop(k, None)
            return _pb.InferenceResponse._make(
                [], _pb.TritonError("BLS request failed: %s" % (e,)))
        self.send(frame)
        return call

    def _answered(self, resp, decoupled):
        """What exec() gives for a call that failed before it was sent."""
        if not decoupled:
            return resp
        call = _Call(self, 0, True)
        call.q.put((resp, True))
        return _pb.ResponseIterator(call)

    def bls_exec(self, req, decoupled):
        call = self._bls_start(req, decoupled)
        if isinstance(call, _pb.InferenceResponse):
            return self._answered(call, decoupled)
        if decoupled:
            return _pb.ResponseIterator(call)
        resp = call.next_response()
        return resp if resp is not None else _pb.InferenceResponse._make([], None)

    def bls_async_exec(self, req, decoupled, loop):
        if loop is not self.loop:
            # a loop of the model's own thread: that thread may never read
            # fd 3, so wait in an executor thread (as Triton does)
            return loop.run_in_executor(None, self.bls_exec, req, decoupled)
        fut = loop.create_future()
        call = self._bls_start(req, decoupled, loop, fut)
        if isinstance(call, _pb.InferenceResponse):
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
                resp = _pb.InferenceResponse._make(
                    tensors, _pb._error_from_wire(err) if err else None,
                    msg.get("parameters") or None)
        except Exception as e:
            # The caller must hear something, or it would wait forever.
            resp = _pb.InferenceResponse._make(
                [], _pb.TritonError("reading the BLS response failed: %s" % e), None)
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
        call = _Call(self, k)
        self.calls[k] = call
        frame = {"t": "model_control", "call": k, "op": op, "name": str(name),
                 "version": version, "config": config}
        if unload_dependents:
            frame["unload_dependents"] = True
        self.send(frame)
        value, error = self.reader.wait(call.q)
        if error:
            raise _pb.TritonModelException(error.get("message", "model control failed"))
        return value

    def log(self, level, message):
        self.send({"t": "log", "level": level, "message": message})

    def metric(self, frame):
        self.send(frame)


def _import_model(model_file):
    """Import model.py by path, as Triton does: the version directory and the
    model directory go on sys.path, and the module is named
    '<version>.<file stem>' with '<version>' a package (relative imports work)."""
    import importlib.util
    import types
    version_dir = os.path.dirname(model_file)
    model_dir = os.path.dirname(version_dir)
    for p in (version_dir, model_dir):
        if p not in sys.path:
            sys.path.append(p)
    version = os.path.basename(version_dir)
    stem = os.path.splitext(os.path.basename(model_file))[0]
    if version.isidentifier() or version.isdigit():
        pkg = sys.modules.get(version)
        if pkg is None or getattr(pkg, "__path__", None) != [version_dir]:
            pkg = types.ModuleType(version)
            pkg.__path__ = [version_dir]
            pkg.__package__ = version
            sys.modules[version] = pkg
        name = "%s.%s" % (version, stem)
    else:
        name = stem
    spec = importlib.util.spec_from_file_location(name, model_file)
    if spec is None or spec.loader is None:
        raise ImportError("cannot load %s" % model_file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def main(argv):
    global _np, _pb, _arena, _queue, _asyncio, _inspect, _select
    # The server decides when a stub ends (it closes the pipes, or kills it): a Ctrl-C or
    # SIGTERM sent to the whole process group must not cut short the server's drain.
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    opts = _parse_args(argv)
    # Triton's stub embeds Python without arguments: a model sees sys.argv == [''],
    # never the stub's flags (argparse or unittest.main() in initialize would read them).
    sys.argv = [""]
    try:
        import numpy as _np
    except ImportError:
        _fatal("numpy is not installed for %s: install it with '%s -m pip install numpy'"
               % (sys.executable, sys.executable))
    import asyncio as _asyncio
    import inspect as _inspect
    import queue as _queue
    import select as _select
    try:
        import triton_python_backend_utils as _pb
        import tritium_arena as _arena
    except BaseException as e:
        _fatal("cannot import triton_python_backend_utils: %s" % _format_exception(e))

    for fd in (FD_IN, FD_OUT):
        os.set_blocking(fd, True)
    try:   # a model's print() reaches the server's log line by line
        sys.stdout.reconfigure(line_buffering=True)
    except (AttributeError, ValueError):
        pass
    arena_sizes = {"first_size": int(opts["--shm-first-bytes"] or _arena.FIRST_REGION_SIZE),
                   "growth": int(opts["--shm-growth-bytes"]) if opts["--shm-growth-bytes"] else None}
    stub = Stub(opts["--model-file"], opts["--shm-dir"], opts["--shm-prefix"], arena_sizes)
    _pb._stub = stub
    try:
        module = _import_model(stub.model_file)
    except BaseException as e:
        _fatal("failed to import Python model %s: %s" % (stub.model_file, _format_exception(e)))
    cls = getattr(module, "TritonPythonModel", None)
    if cls is None:
        _fatal("Python model %s does not define class TritonPythonModel" % stub.model_file)
    stub.model_cls = cls
    stub.loop = _asyncio.new_event_loop()
    _asyncio.set_event_loop(stub.loop)
    stub.loop.add_reader(FD_IN, stub._on_loop_readable)

    stub.send({"t": "hello", "python": "%d.%d.%d" % sys.version_info[:3],
               "numpy": _np.__version__})
    threading.Thread(target=stub.watch_hangup, name="tritium-hangup", daemon=True).start()
    stub.serve()


if __name__ == "__main__":
    main(sys.argv[1:])
