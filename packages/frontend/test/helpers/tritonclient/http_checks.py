"""Drives `tritium serve` with tritonclient.http as Triton's users do; prints one JSON line.

usage: http_checks.py <host:port> <prefix for shared-memory keys>
"""

import sys

import numpy as np
import tritonclient.http as httpclient
import tritonclient.utils.shared_memory as shm

from tc_common import Observations, int32_pair, sequence

url, prefix = sys.argv[1], sys.argv[2]
client = httpclient.InferenceServerClient(url=url)
o = Observations()


def simple_inputs(binary):
    a, b = int32_pair()
    inputs = [httpclient.InferInput("INPUT0", [1, 16], "INT32"), httpclient.InferInput("INPUT1", [1, 16], "INT32")]
    inputs[0].set_data_from_numpy(a, binary_data=binary)
    inputs[1].set_data_from_numpy(b, binary_data=binary)
    return inputs


def infer_simple(binary):
    outputs = [httpclient.InferRequestedOutput(n, binary_data=binary) for n in ("OUTPUT0", "OUTPUT1")]
    result = client.infer("simple", simple_inputs(binary), outputs=outputs, request_id="tc-http")
    response = result.get_response()
    return {
        "id": response.get("id"),
        "model_version": response.get("model_version"),
        "binary": [("binary_data_size" in out.get("parameters", {})) for out in response["outputs"]],
        "OUTPUT0": result.as_numpy("OUTPUT0"),
        "OUTPUT1": result.as_numpy("OUTPUT1"),
    }


def metadata():
    m = client.get_server_metadata()
    return {"name": m["name"], "has_version": bool(m.get("version")), "extensions": m.get("extensions", [])}


def model_metadata():
    m = client.get_model_metadata("simple")
    return {"name": m["name"], "platform": m.get("platform"), "inputs": [[t["name"], t["datatype"], t["shape"]] for t in m["inputs"]], "outputs": [[t["name"], t["datatype"], t["shape"]] for t in m["outputs"]]}


def model_config():
    c = client.get_model_config("simple_dyna_sequence")
    controls = [i["name"] for i in c["sequence_batching"]["control_input"]]
    return {"name": c["name"], "max_batch_size": c["max_batch_size"], "platform": c.get("platform"), "controls": controls, "strategy": [k for k in ("oldest", "direct") if k in c["sequence_batching"]]}


def strings():
    a = np.array([[str(i).encode() for i in range(16)]], dtype=np.object_)
    b = np.array([[b"1"] * 16], dtype=np.object_)
    inputs = [httpclient.InferInput("INPUT0", [1, 16], "BYTES"), httpclient.InferInput("INPUT1", [1, 16], "BYTES")]
    inputs[0].set_data_from_numpy(a)
    inputs[1].set_data_from_numpy(b, binary_data=False)
    result = client.infer("simple_string", inputs)
    return {"OUTPUT0": result.as_numpy("OUTPUT0"), "OUTPUT1": result.as_numpy("OUTPUT1")}


def identity():
    data = np.array([["héllo".encode(), b"", b"\x00\x01binary"]], dtype=np.object_)
    inp = httpclient.InferInput("INPUT0", [1, 3], "BYTES")
    inp.set_data_from_numpy(data)
    result = client.infer("simple_identity", [inp])
    out = result.as_numpy("OUTPUT0")
    return {"shape": list(out.shape), "same": [bytes(x) for x in out.reshape(-1)] == [bytes(x) for x in data.reshape(-1)]}


def int8():
    inputs = [httpclient.InferInput("INPUT0", [1, 16], "INT8"), httpclient.InferInput("INPUT1", [1, 16], "INT8")]
    inputs[0].set_data_from_numpy(np.full((1, 16), 100, dtype=np.int8))
    inputs[1].set_data_from_numpy(np.full((1, 16), 50, dtype=np.int8))
    result = client.infer("simple_int8", inputs)
    return {"OUTPUT0": result.as_numpy("OUTPUT0")[0][:2], "OUTPUT1": result.as_numpy("OUTPUT1")[0][:2], "dtype": str(result.as_numpy("OUTPUT0").dtype)}


def shared_memory():
    """Inputs and outputs in system shared memory: register, infer, status, unregister."""
    a, b = int32_pair()
    size = a.nbytes
    regions = []
    try:
        ins = shm.create_shared_memory_region("tc_http_in", f"/{prefix}_http_in", size * 2)
        regions.append(ins)
        outs = shm.create_shared_memory_region("tc_http_out", f"/{prefix}_http_out", size * 2)
        regions.append(outs)
        shm.set_shared_memory_region(ins, [a, b])
        client.register_system_shared_memory("tc_http_in", f"/{prefix}_http_in", size * 2)
        client.register_system_shared_memory("tc_http_out", f"/{prefix}_http_out", size * 2)
        status = client.get_system_shared_memory_status()
        inputs = [httpclient.InferInput("INPUT0", [1, 16], "INT32"), httpclient.InferInput("INPUT1", [1, 16], "INT32")]
        inputs[0].set_shared_memory("tc_http_in", size)
        inputs[1].set_shared_memory("tc_http_in", size, offset=size)
        outputs = [httpclient.InferRequestedOutput("OUTPUT0", binary_data=True), httpclient.InferRequestedOutput("OUTPUT1", binary_data=True)]
        outputs[0].set_shared_memory("tc_http_out", size)
        outputs[1].set_shared_memory("tc_http_out", size, offset=size)
        result = client.infer("simple", inputs, outputs=outputs)
        out0 = result.get_output("OUTPUT0")
        sum_ = shm.get_contents_as_numpy(outs, np.int32, out0["shape"]).copy()  # a view of the region, which is destroyed below
        diff = shm.get_contents_as_numpy(outs, np.int32, [1, 16], offset=size).copy()  # a view of the region, which is destroyed below
        client.unregister_system_shared_memory("tc_http_in")
        after_one = client.get_system_shared_memory_status()
        client.unregister_system_shared_memory()
        after_all = client.get_system_shared_memory_status()
        return {
            "registered": sorted(r["name"] for r in status),
            "output_parameters": out0.get("parameters", {}),
            "OUTPUT0": sum_,
            "OUTPUT1": diff,
            "after_one": [r["name"] for r in after_one],
            "after_all": after_all,
        }
    finally:
        for region in regions:
            shm.destroy_shared_memory_region(region)


def statistics():
    stats = client.get_inference_statistics("simple")["model_stats"]
    s = stats[0]
    return {"names": [x["name"] for x in stats], "version": s["version"], "inference_count": s["inference_count"], "success": s["inference_stats"]["success"]["count"]}


def unknown_model():
    inp = httpclient.InferInput("INPUT0", [1, 16], "INT32")
    inp.set_data_from_numpy(np.zeros((1, 16), dtype=np.int32))
    return client.infer("no_such_model", [inp])


def duplicate_outputs():
    outputs = [httpclient.InferRequestedOutput("OUTPUT0"), httpclient.InferRequestedOutput("OUTPUT0")]
    return client.infer("simple", simple_inputs(True), outputs=outputs)


o.check("live", client.is_server_live)
o.check("ready", client.is_server_ready)
o.check("model_ready", lambda: client.is_model_ready("simple"))
o.check("unknown_model_ready", lambda: client.is_model_ready("no_such_model"))
o.check("server_metadata", metadata)
o.check("model_metadata", model_metadata)
o.check("model_config", model_config)
o.check("infer_json", lambda: infer_simple(False))
o.check("infer_binary", lambda: infer_simple(True))
o.check("strings", strings)
o.check("identity", identity)
o.check("int8", int8)
o.check("shared_memory", shared_memory)
o.check("sequence", lambda: sequence(client, httpclient, "simple_sequence", 1000, [0, 11, 7, 5]))
o.check("sequence_string_id", lambda: sequence(client, httpclient, "simple_sequence", "tc-http-seq", [20, -7, -5]))
o.check("dyna_sequence", lambda: sequence(client, httpclient, "simple_dyna_sequence", 1001, [0, 11, 7, 5]))
o.check("string_dyna_sequence", lambda: sequence(client, httpclient, "simple_string_dyna_sequence", "1002", [20, -7, -5]))
o.refusal("string_dyna_sequence_bad_id", lambda: sequence(client, httpclient, "simple_string_dyna_sequence", "tc-not-a-number", [1]))
o.check("statistics", statistics)
o.refusal("unknown_model", unknown_model)
o.refusal("unknown_model_metadata", lambda: client.get_model_metadata("no_such_model"))
o.refusal("duplicate_outputs", duplicate_outputs)
o.refusal("shm_missing_key", lambda: client.register_system_shared_memory("tc_missing", f"/{prefix}_missing", 64))
o.emit()
client.close()
