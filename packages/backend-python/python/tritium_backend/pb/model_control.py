"""Model control (the server must run in explicit model-control mode; the
server checks that and answers with the error)."""

from .errors import TritonModelException, _require_stub
from .requests import _as_str


def load_model(model_name, config="", files=None):
    if files:
        raise TritonModelException(
            "load_model(files=...) (override files) is not supported by Tritium")
    _require_stub("load_model()").model_control(
        "load", _as_str(model_name, "model_name"), "", _as_str(config, "config"))


def unload_model(model_name, unload_dependents=False):
    _require_stub("unload_model()").model_control(
        "unload", _as_str(model_name, "model_name"), "", "",
        unload_dependents=bool(unload_dependents))


def is_model_ready(model_name, model_version=""):
    return bool(_require_stub("is_model_ready()").model_control(
        "ready", _as_str(model_name, "model_name"), _as_str(model_version, "model_version"), ""))
