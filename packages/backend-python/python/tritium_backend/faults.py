"""Errors: the command line, the fatal frame, exceptions as frame errors."""

import os
import sys

from .wire import encode_frame, write_all


def parse_args(argv):
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


def fatal(message, code="INTERNAL"):
    try:
        write_all(encode_frame({"t": "fatal", "error": {"code": code, "message": message}}))
    except OSError:
        pass
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(1)


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_LAUNCHER = os.path.join(os.path.dirname(_PACKAGE_DIR), "tritium_stub.py")
_IMPORTLIB_FRAMES = ("<frozen importlib._bootstrap_external>", "<frozen importlib._bootstrap>")


def _own_frame(filename):
    """A frame of the stub itself (not of pb/, which models call) or of importlib."""
    if filename in _IMPORTLIB_FRAMES:
        return True
    path = os.path.abspath(filename)
    return path == _LAUNCHER or os.path.dirname(path) == _PACKAGE_DIR


def format_exception(e):
    """An exception as one message: type and text first, then the traceback."""
    import traceback
    head = "%s: %s" % (type(e).__name__, e)
    tb = e.__traceback__
    # leave out the stub's own frames (and importlib's) above the model's
    while tb is not None and tb.tb_next is not None and _own_frame(
            tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    tb = "".join(traceback.format_exception(type(e), e, tb))
    return head + "\n\n" + tb.rstrip("\n")


class Fault(Exception):
    """A wrong execute() result; the message names the fault."""


def exc_error(e):
    """An exception as a frame's error: a fault by its message alone, anything else with its traceback."""
    return {"code": "INTERNAL", "message": str(e) if isinstance(e, Fault) else format_exception(e)}
