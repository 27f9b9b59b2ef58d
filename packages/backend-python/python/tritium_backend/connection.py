"""The running stub, as the model-facing API (pb/) reaches it.

`main` calls connect(stub) once, before the model is imported; current() is
that object, or None when triton_python_backend_utils is imported outside a
stub (then tensors, responses and configs work as usual, Logger writes to
stderr, metrics are kept locally, and the calls that need a server raise
TritonModelException).

What pb/ uses of it: `model_dir`, `poll()` (handle frames already in the
pipe: a cancel), `bls_exec(request, decoupled)`,
`bls_async_exec(request, decoupled, loop)`,
`sender_send(sender, request, response, final)`, `log(level, message)`,
`metric(frame)`, `model_control(op, name, version, config, unload_dependents)`.
This module imports nothing, so both sides import it without a cycle.
"""



class _Registry:
    __slots__ = ("server",)

    def __init__(self):
        self.server = None


_registry = _Registry()


def connect(server):
    """Make `server` the object current() returns (None disconnects)."""
    _registry.server = server


def current():
    """The running stub, or None outside one."""
    return _registry.server
