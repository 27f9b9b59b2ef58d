"""Model control through tritonclient (HTTP or gRPC) on a server in explicit mode, or the
refusal of a server that is not; prints one JSON line.

usage: control_checks.py http|grpc <host:port> explicit|none
"""

import sys

from tc_common import Observations

protocol, url, mode = sys.argv[1], sys.argv[2], sys.argv[3]
if protocol == "http":
    import tritonclient.http as tc

    client = tc.InferenceServerClient(url=url)
    config_of = lambda name: client.get_model_config(name)
    index = lambda: client.get_model_repository_index()
else:
    import tritonclient.grpc as tc

    client = tc.InferenceServerClient(url=url)
    config_of = lambda name: client.get_model_config(name, as_json=True)["config"]
    index = lambda: client.get_model_repository_index(as_json=True).get("models", [])

o = Observations()
MODEL = "simple_int8"


def states():
    return {m["name"]: m.get("state", "") for m in index()}


def load_with_override():
    client.load_model(MODEL, config='{"max_batch_size":"4"}')
    return {"ready": client.is_model_ready(MODEL), "max_batch_size": int(config_of(MODEL)["max_batch_size"])}


def unload():
    client.unload_model(MODEL)
    return {"ready": client.is_model_ready(MODEL), "state": states().get(MODEL)}


def reload():
    client.load_model(MODEL)
    return {"ready": client.is_model_ready(MODEL), "max_batch_size": int(config_of(MODEL)["max_batch_size"])}


if mode == "explicit":
    o.check("index", states)
    o.check("load_override", load_with_override)
    o.check("unload", unload)
    o.check("reload", reload)
    o.refusal("load_unknown", lambda: client.load_model("no_such_model"))
    o.refusal("load_bad_override", lambda: client.load_model(MODEL, config='"parameters": {"config": {{"max_batch_size": "16"}}}'))
    o.check("ready_after_bad_override", lambda: client.is_model_ready(MODEL))
else:
    o.refusal("load", lambda: client.load_model("simple"))
    o.refusal("unload", lambda: client.unload_model("simple"))
    o.check("ready", lambda: client.is_model_ready("simple"))
o.emit()
client.close()
