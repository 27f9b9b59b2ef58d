"""Reading fd 3 (leader/follower, see tritium_stub.py's doc) and writing fd 4."""

import os
import queue as _queue
import select as _select
import sys
import threading

from .arena import unlink_prefix
from .faults import format_exception
from .pb.metrics import _dropped_metrics
from .wire import FD_IN, decode, encode_frame, write_all


LEAD = object()  # put in a waiting follower's queue: "no one reads fd 3 now"


class Reader:
    """Reads fd 3 on behalf of whichever thread waits (see tritium_stub.py).

    A waiter waits on a SimpleQueue that the frames' handlers feed. It reads
    fd 3 itself when no one else does (it holds `lock` meanwhile); otherwise
    it is a follower and blocks on its queue, where the leader puts LEAD when
    it stops reading so that a follower takes over."""

    def __init__(self, stub):
        self.stub = stub
        self.lock = threading.Lock()
        self.buf = b""
        self.flock = threading.Lock()
        self.followers = []        # objects with put(); get LEAD on release
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
                if item is not LEAD:
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
            if item is not LEAD:
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
                f.put(LEAD)

    def _lead(self, q):
        get_nowait = q.get_nowait
        read = self.read_once
        while True:
            try:
                item = get_nowait()
            except _queue.Empty:
                read()
                continue
            if item is not LEAD:
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
            msg = decode(buf[pos + 4:pos + 4 + n])
            pos += 4 + n
            try:
                dispatch(msg)
            except Exception as e:  # a bad frame must not stop the reading
                self.stub.log("ERROR", "tritium stub: cannot handle %r frame: %s"
                              % (msg.get("t") if isinstance(msg, dict) else msg,
                                 format_exception(e)))
        self.buf = buf[pos:] if pos < end else b""


class Transport:
    """The stub's I/O: one write lock for fd 4, the reader of fd 3, the hang-up watchdog."""

    def send(self, obj):
        data = encode_frame(obj)
        dropped = _dropped_metrics
        if dropped:
            extra = []
            while dropped:
                try:
                    mid = dropped.popleft()
                except IndexError:
                    break
                extra.append(encode_frame({"t": "metric", "op": "drop", "id": mid}))
            data = b"".join(extra) + data
        try:
            with self._wlock:
                write_all(data)
        except OSError:
            self._peer_gone()

    def _peer_gone(self):
        unlink_prefix(self.shm_dir, self.prefix)
        self._exit()

    def _exit(self):
        """Ends the process now, its output flushed first (os._exit skips that)."""
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
