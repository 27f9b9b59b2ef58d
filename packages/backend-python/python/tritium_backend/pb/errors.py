"""TritonError, TritonModelException and the wire form of errors."""

from .. import connection as _connection


class TritonError:
    """An error carried by an InferenceResponse: a message and a code."""

    UNKNOWN = 0
    INTERNAL = 1
    NOT_FOUND = 2
    INVALID_ARG = 3
    UNAVAILABLE = 4
    UNSUPPORTED = 5
    ALREADY_EXISTS = 6
    CANCELLED = 7

    __slots__ = ("_message", "_code", "_wire")

    def __init__(self, message, code=INTERNAL):
        if message is None:
            raise TypeError("TritonError message must not be None")
        if code not in _CODE_TO_WIRE:
            raise TypeError("unknown TritonError code %r" % (code,))
        self._message = str(message)
        self._code = code
        self._wire = None  # the exact wire code when it came from the server

    def message(self):
        return self._message

    def code(self):
        return self._code

    def __str__(self):
        return self._message

    def __repr__(self):
        return "TritonError(%r, %s)" % (self._message, _CODE_TO_WIRE[self._code])


_CODE_TO_WIRE = {
    TritonError.UNKNOWN: "INTERNAL",  # Node has no UNKNOWN
    TritonError.INTERNAL: "INTERNAL",
    TritonError.NOT_FOUND: "NOT_FOUND",
    TritonError.INVALID_ARG: "INVALID_ARG",
    TritonError.UNAVAILABLE: "UNAVAILABLE",
    TritonError.UNSUPPORTED: "UNSUPPORTED",
    TritonError.ALREADY_EXISTS: "ALREADY_EXISTS",
    TritonError.CANCELLED: "CANCELLED",
}
# Node's codes that Triton lacks map to the nearest TritonError code; the
# exact wire code is kept so that passing the error on loses nothing.
_WIRE_TO_CODE = {
    "INTERNAL": TritonError.INTERNAL,
    "NOT_FOUND": TritonError.NOT_FOUND,
    "INVALID_ARG": TritonError.INVALID_ARG,
    "UNAVAILABLE": TritonError.UNAVAILABLE,
    "UNSUPPORTED": TritonError.UNSUPPORTED,
    "ALREADY_EXISTS": TritonError.ALREADY_EXISTS,
    "CANCELLED": TritonError.CANCELLED,
    "DEADLINE_EXCEEDED": TritonError.UNAVAILABLE,
    "RESOURCE_EXHAUSTED": TritonError.UNAVAILABLE,
}


def _error_from_wire(e):
    wire = e.get("code") or "INTERNAL"
    err = TritonError(e.get("message", ""), _WIRE_TO_CODE.get(wire, TritonError.INTERNAL))
    err._wire = wire
    return err


def _error_to_wire(err):
    return {"code": err._wire or _CODE_TO_WIRE[err._code], "message": err._message}


class TritonModelException(Exception):
    """Raised by the API on misuse; a model may raise it too."""

    def __init__(self, message="", *args):
        super().__init__(message, *args)
        self._msg = message

    def message(self):
        return self._msg

    def __str__(self):
        return str(self._msg)


def _require_stub(what):
    s = _connection.current()
    if s is None:
        raise TritonModelException(
            "%s needs the Tritium Python stub; it is not available when "
            "triton_python_backend_utils is imported on its own" % what)
    return s
