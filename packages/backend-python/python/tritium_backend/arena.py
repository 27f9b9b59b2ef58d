"""Shared-memory arenas for the Tritium Python stub (see PROTOCOL.md).

Arena: the owner's side. Regions are files <dir>/<prefix>-<tag><gen>, each
mapped read/write. Allocations go into the current region as a ring (64-byte
aligned, increasing offsets, wrapping to 0 when the end is too short and the
oldest live allocation leaves room). When nothing fits, the next region is
created (first `first_size`, 1 MiB by default, unless the allocation needs
more; then max(2 x last size, next power of two >= the allocation), or with a
`growth` step Triton's shm-growth-byte-size rule: last size + growth x
(allocation // growth + 1)) and the current one is retired: it is dropped
once its last lease is released. All the allocations of one frame share one lease. Before
growing, the arena calls its `drain` callback once (the stub reads the
`free` frames already in the pipe) and tries again.

RegionMap: the receiver's side. A region is mapped the first time a frame
names it (size from fstat) and its file is unlinked at once; only the newest
mapping of the owner is kept (older ones live on while numpy views of them
exist, and are unmapped when the last view goes).
"""

import collections
import mmap
import os
import threading

FIRST_REGION_SIZE = 1 << 20
ALIGN = 64


def _pow2_at_least(n):
    return 1 << max(0, (n - 1).bit_length())


class _Region:
    __slots__ = ("name", "size", "mm", "mv", "live", "ring", "head", "retired")

    def __init__(self, name, size, mm):
        self.name = name
        self.size = size
        self.mm = mm
        self.mv = memoryview(mm)
        self.live = 0          # allocations not yet released
        self.ring = collections.deque()  # current region only: live entries, oldest first
        self.head = 0          # next offset in the ring
        self.retired = False


class _Alloc:
    __slots__ = ("region", "offset", "end", "alive")

    def __init__(self, region, offset, end):
        self.region = region
        self.offset = offset
        self.end = end
        self.alive = True


class Arena:
    """The owner's arena. Thread-safe."""

    def __init__(self, directory, prefix, tag, first_size=FIRST_REGION_SIZE, drain=None, growth=None):
        self._drain = drain
        self._growth = growth
        self._dir = directory
        self._prefix = prefix
        self._tag = tag
        self._first = first_size
        self._gen = 0
        self._cur = None
        self._retired = []
        self._leases = {}
        self._next_lease = 1
        self._lock = threading.Lock()

    # -- regions

    def _new_region(self, size):
        name = "%s-%s%d" % (self._prefix, self._tag, self._gen)
        self._gen += 1
        path = os.path.join(self._dir, name)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            # Reserve the pages now: a full /dev/shm fails here with ENOSPC
            # instead of killing a process with SIGBUS when it writes later.
            os.posix_fallocate(fd, 0, size)
            mm = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        except BaseException:
            os.close(fd)
            try:
                os.unlink(path)
            except OSError:
                pass
            raise
        os.close(fd)
        return _Region(name, size, mm)

    def _retire(self, region):
        region.retired = True
        region.ring.clear()
        if region.live > 0:
            self._retired.append(region)

    # -- allocation

    def _place(self, n):
        """Room for n (aligned) bytes in the current region: (region, offset),
        or None when it is full."""
        cur = self._cur
        if cur is None:
            return None
        ring = cur.ring
        if not ring:
            if n <= cur.size:
                cur.head = n
                return cur, 0
            return None
        head = cur.head
        tail = ring[0].offset
        if tail < head:                  # live span [tail, head)
            if head + n <= cur.size:
                cur.head = head + n
                return cur, head
            if n <= tail:                # wrap to 0
                cur.head = n
                return cur, 0
        elif head + n <= tail:           # wrapped: free span [head, tail)
            cur.head = head + n
            return cur, head
        return None

    def _grow(self, total):
        """Retire the current region; start the next one, big enough for
        `total` bytes (a frame's blocks never span regions)."""
        cur = self._cur
        if cur is None:
            size = self._first if total <= self._first else self._grown(self._first, total)
        else:
            size = self._grown(cur.size, total)
            self._retire(cur)
        self._cur = self._new_region(size)

    def _grown(self, size, total):
        if self._growth is None:
            return max(2 * size, _pow2_at_least(total))
        return size + self._growth * (total // self._growth + 1)

    def allocate(self, sizes):
        """Reserve one block per size (0 gives None) under one new lease.
        Returns (lease id or None, [(region, offset) | None]). The caller
        fills the blocks (region.mv[offset:offset+size]) and sends the frame."""
        if self._drain is not None:
            with self._lock:
                got = self._allocate(sizes, False)
            if got is not None:
                return got
            self._drain()
        with self._lock:
            return self._allocate(sizes, True)

    def _allocate(self, sizes, grow):
        blocks = [(size + ALIGN - 1) & ~(ALIGN - 1) if size > 0 else 0 for size in sizes]
        entries = self._try_place(blocks)
        if entries is None:
            if not grow and self._cur is not None:
                return None
            self._grow(sum(blocks))
            entries = self._try_place(blocks)
        out = []
        live = []
        for a in entries:
            if a is None:
                out.append(None)
            else:
                out.append((a.region, a.offset))
                live.append(a)
        lease = None
        if live:
            lease = self._next_lease
            self._next_lease += 1
            self._leases[lease] = live
        return lease, out

    def _try_place(self, blocks):
        """Place every block of a frame in the current region (entries, None
        for empty blocks), or none of them (None)."""
        cur = self._cur
        if cur is None:
            return None if any(blocks) else [None] * len(blocks)
        head0 = cur.head
        ring = cur.ring
        entries = []
        added = 0
        for n in blocks:
            if n == 0:
                entries.append(None)
                continue
            got = self._place(n)
            if got is None:
                for _ in range(added):
                    ring.pop()
                cur.head = head0
                cur.live -= added
                return None
            a = _Alloc(cur, got[1], got[1] + n)
            ring.append(a)      # live from now on: the frame's next block avoids it
            cur.live += 1
            added += 1
            entries.append(a)
        return entries

    def free(self, leases):
        """Release leases (ids the peer returned with a `free` frame)."""
        with self._lock:
            cur = self._cur
            for lease in leases:
                entries = self._leases.pop(lease, None)
                if entries is None:
                    continue
                for a in entries:
                    if not a.alive:
                        continue
                    a.alive = False
                    r = a.region
                    r.live -= 1
                    if r.retired and r.live == 0:
                        try:
                            self._retired.remove(r)
                        except ValueError:
                            pass
            if cur is not None:
                ring = cur.ring
                while ring and not ring[0].alive:
                    ring.popleft()
                if not ring:
                    cur.head = 0


class RegionMap:
    """The receiver's map of one owner's regions. Used from one thread."""

    def __init__(self, directory):
        self._dir = directory
        self._name = None
        self._mm = None

    def get(self, name):
        if name == self._name:
            return self._mm
        path = os.path.join(self._dir, name)
        fd = os.open(path, os.O_RDWR)
        try:
            size = os.fstat(fd).st_size
            mm = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        finally:
            os.close(fd)
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        # Only the newest mapping is kept; an older one stays mapped while
        # arrays still view it (numpy holds a reference to the mmap).
        self._name = name
        self._mm = mm
        return mm


def unlink_prefix(directory, prefix):
    """Unlink every <directory>/<prefix>* (cleanup when the peer is gone)."""
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if name.startswith(prefix):
            try:
                os.unlink(os.path.join(directory, name))
            except OSError:
                pass
