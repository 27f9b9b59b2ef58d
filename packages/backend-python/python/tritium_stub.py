"""Tritium's Python stub: one process per model instance (see PROTOCOL.md).

    python tritium_stub.py --model-file <versionDir>/model.py \
        --shm-dir <dir> --shm-prefix <prefix> \
        [--shm-first-bytes <n>] [--shm-growth-bytes <n>]

Frames (4-byte LE length + UTF-8 JSON) arrive on fd 3 and leave on fd 4;
tensor bytes live in shared-memory arenas (tritium_backend/arena.py).

Reading fd 3 (see tritium_backend/transport.py, Reader): there is no dedicated reader thread. Whichever
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

This file is only the launcher (the server and its tests know stubs by its
name); the stub is the package tritium_backend:

    main.py          entry point: arguments, numpy check, connect, import model.py, serve
    dispatch.py      Stub: state, frame dispatch, work queue, main loop (event loop too)
    transport.py     Reader (fd 3, leader/follower), send (fd 4), hang-up watchdog
    wire.py          frame codec and the fds
    arena.py         shared-memory arenas (Arena: the stub's; RegionMap: Node's)
    packing.py       tensors in and out of the arenas
    execute.py       initialize/auto_complete/is_ready/finalize, execute, responses, decoupled sends
    bls.py           BLS exec/async_exec and model control (calls waiting for Node's answer)
    telemetry.py     log and metric frames
    faults.py        command line, fatal frame, exceptions as frame errors
    model_import.py  importing model.py as Triton does
    connection.py    connect()/current(): how the model API reaches the running stub
    pb/              the model API that triton_python_backend_utils.py re-exports
"""

import sys

from tritium_backend.main import main

if __name__ == "__main__":
    main(sys.argv[1:])
