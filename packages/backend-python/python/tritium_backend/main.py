"""The stub's entry point: tritium_stub.py calls main(sys.argv[1:]).

Only modules that need neither numpy nor the model API are imported at the
top, so that a missing numpy, or a model API that cannot be imported, still
ends in a fatal frame that says so."""

import asyncio
import os
import signal
import sys
import threading

from . import connection
from .faults import fatal, format_exception, parse_args
from .model_import import import_model
from .wire import FD_IN, FD_OUT


def main(argv):
    # The server decides when a stub ends (it closes the pipes, or kills it): a Ctrl-C or
    # SIGTERM sent to the whole process group must not cut short the server's drain.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    opts = parse_args(argv)
    # Triton's stub embeds Python without arguments: a model sees sys.argv == [''],
    # never the stub's flags (argparse or unittest.main() in initialize would read them).
    sys.argv = [""]
    try:
        import numpy
    except ImportError:
        fatal("numpy is not installed for %s: install it with '%s -m pip install numpy'"
              % (sys.executable, sys.executable))
    try:
        # the model API (imported by the stub's modules too) and the stub itself
        import triton_python_backend_utils  # noqa: F401
        from .arena import FIRST_REGION_SIZE
        from .dispatch import Stub
    except BaseException as e:
        fatal("cannot import triton_python_backend_utils: %s" % format_exception(e))

    for fd in (FD_IN, FD_OUT):
        os.set_blocking(fd, True)
    try:   # a model's print() reaches the server's log line by line
        sys.stdout.reconfigure(line_buffering=True)
    except (AttributeError, ValueError):
        pass
    arena_sizes = {"first_size": int(opts["--shm-first-bytes"] or FIRST_REGION_SIZE),
                   "growth": int(opts["--shm-growth-bytes"]) if opts["--shm-growth-bytes"] else None}
    stub = Stub(opts["--model-file"], opts["--shm-dir"], opts["--shm-prefix"], arena_sizes)
    connection.connect(stub)
    try:
        module = import_model(stub.model_file)
    except BaseException as e:
        fatal("failed to import Python model %s: %s" % (stub.model_file, format_exception(e)))
    cls = getattr(module, "TritonPythonModel", None)
    if cls is None:
        fatal("Python model %s does not define class TritonPythonModel" % stub.model_file)
    stub.model_cls = cls
    stub.loop = asyncio.new_event_loop()
    asyncio.set_event_loop(stub.loop)
    stub.loop.add_reader(FD_IN, stub._on_loop_readable)

    stub.send({"t": "hello", "python": "%d.%d.%d" % sys.version_info[:3],
               "numpy": numpy.__version__})
    threading.Thread(target=stub.watch_hangup, name="tritium-hangup", daemon=True).start()
    stub.serve()
