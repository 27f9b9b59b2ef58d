"""Drives `tritium serve` with tritonclient.grpc as Triton's users do; prints one JSON line.

usage: grpc_checks.py <host:port> <prefix for shared-memory keys>
"""

import queue
import sys
from functools import partial

import grpc
import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.grpc.service_pb2 as service_pb2
import tritonclient.grpc.service_pb2_grpc as service_pb2_grpc
import tritonclient.utils.shared_memory as shm

from tc_common import Observations, error_of, int32_pair, sequence

url, prefix = sys.argv[1], sys.argv[2]
client = grpcclient.InferenceServerClient(url=url)
o = Observations()
STREAM_TIMEOUT_S = 30


def simple_inputs():
    a, b = int32_pair()
    inputs = [grpcclient.InferInput("INPUT0", [1, 16], "INT32"), grpcclient.InferInput("INPUT1", [1, 16], "INT32")]
    inputs[0].set_data_from_numpy(a)
    inputs[1].set_data_from_numpy(b)
    return inputs


def infer_simple():
    outputs = [grpcclient.InferRequestedOutput("OUTPUT0"), grpcclient.InferRequestedOutput("OUTPUT1")]
    result = client.infer("simple", simple_inputs(), outputs=outputs, request_id="tc-grpc")
    response = result.get_response()
    return {"id": response.id, "model_version": response.model_version, "OUTPUT0": result.as_numpy("OUTPUT0"), "OUTPUT1": result.as_numpy("OUTPUT1")}


def metadata():
    m = client.get_server_metadata()
    return {"name": m.name, "has_version": bool(m.version), "extensions": list(m.extensions)}


def model_metadata():
    m = client.get_model_metadata("simple", as_json=True)
    return {"name": m["name"], "versions": m.get("versions"), "inputs": [[t["name"], t["datatype"], [int(d) for d in t["shape"]]] for t in m["inputs"]]}


def model_config():
    c = client.get_model_config("simple_sequence").config
    return {"name": c.name, "max_batch_size": c.max_batch_size, "platform": c.platform, "controls": [i.name for i in c.sequence_batching.control_input]}


def strings(model):
    a = np.array([[str(i).encode() for i in range(16)]], dtype=np.object_)
    if model == "simple_identity":
        inp = grpcclient.InferInput("INPUT0", [1, 16], "BYTES")
        inp.set_data_from_numpy(a)
        return {"OUTPUT0": client.infer(model, [inp]).as_numpy("OUTPUT0")}
    b = np.array([[b"1"] * 16], dtype=np.object_)
    inputs = [grpcclient.InferInput("INPUT0", [1, 16], "BYTES"), grpcclient.InferInput("INPUT1", [1, 16], "BYTES")]
    inputs[0].set_data_from_numpy(a)
    inputs[1].set_data_from_numpy(b)
    result = client.infer(model, inputs)
    return {"OUTPUT0": result.as_numpy("OUTPUT0"), "OUTPUT1": result.as_numpy("OUTPUT1")}


def shared_memory():
    a, b = int32_pair()
    size = a.nbytes
    regions = []
    try:
        ins = shm.create_shared_memory_region("tc_grpc_in", f"/{prefix}_grpc_in", size * 2)
        regions.append(ins)
        outs = shm.create_shared_memory_region("tc_grpc_out", f"/{prefix}_grpc_out", size * 2)
        regions.append(outs)
        shm.set_shared_memory_region(ins, [a, b])
        client.register_system_shared_memory("tc_grpc_in", f"/{prefix}_grpc_in", size * 2)
        client.register_system_shared_memory("tc_grpc_out", f"/{prefix}_grpc_out", size * 2)
        status = client.get_system_shared_memory_status(as_json=True)
        inputs = [grpcclient.InferInput("INPUT0", [1, 16], "INT32"), grpcclient.InferInput("INPUT1", [1, 16], "INT32")]
        inputs[0].set_shared_memory("tc_grpc_in", size)
        inputs[1].set_shared_memory("tc_grpc_in", size, offset=size)
        outputs = [grpcclient.InferRequestedOutput("OUTPUT0"), grpcclient.InferRequestedOutput("OUTPUT1")]
        outputs[0].set_shared_memory("tc_grpc_out", size)
        outputs[1].set_shared_memory("tc_grpc_out", size, offset=size)
        result = client.infer("simple", inputs, outputs=outputs)
        shape = [int(d) for d in result.get_output("OUTPUT0").shape]
        out0 = shm.get_contents_as_numpy(outs, np.int32, shape).copy()  # a view of the region, which is destroyed below
        out1 = shm.get_contents_as_numpy(outs, np.int32, shape, offset=size).copy()  # a view of the region, which is destroyed below
        client.unregister_system_shared_memory()
        after = client.get_system_shared_memory_status(as_json=True)
        return {"registered": sorted(status.get("regions", {}).keys()), "shape": shape, "OUTPUT0": out0, "OUTPUT1": out1, "after": after.get("regions", {})}
    finally:
        for region in regions:
            shm.destroy_shared_memory_region(region)


def stream(send):
    """Runs send(client) with a stream open; returns the results and errors in arrival order."""
    received = queue.Queue()
    client.start_stream(callback=lambda result, error: received.put((result, error)))
    try:
        expected = send(client)
        seen = []
        while len(seen) < expected:
            seen.append(received.get(timeout=STREAM_TIMEOUT_S))
        return seen
    finally:
        client.stop_stream()


def sequence_stream():
    """Two interleaved sequences of simple_sequence and one of simple_dyna_sequence on one stream."""

    def send(c):
        for i, value in enumerate([0, 11, 7]):
            for model, sid, v in (("simple_sequence", 2000, value), ("simple_sequence", 2001, -value), ("simple_dyna_sequence", 2002, value)):
                inp = grpcclient.InferInput("INPUT", [1, 1], "INT32")
                inp.set_data_from_numpy(np.array([[v]], dtype=np.int32))
                c.async_stream_infer(model, [inp], request_id=f"{model}-{sid}-{i}", sequence_id=sid, sequence_start=(i == 0), sequence_end=(i == 2))
        return 9

    answers = {}
    for result, error in stream(send):
        if error is not None:
            answers.setdefault("errors", []).append(error_of(error))
            continue
        rid = result.get_response().id
        answers[rid] = int(result.as_numpy("OUTPUT")[0][0])
    return answers


def decoupled():
    """repeat_int32 (a decoupled Python model): one response per element, then an empty final one."""
    values = np.array([4, 2, 0, 1], dtype=np.int32)

    def send(c):
        inputs = [grpcclient.InferInput("IN", [4], "INT32"), grpcclient.InferInput("DELAY", [4], "UINT32"), grpcclient.InferInput("WAIT", [1], "UINT32")]
        inputs[0].set_data_from_numpy(values)
        inputs[1].set_data_from_numpy(np.array([10, 0, 10, 0], dtype=np.uint32))
        inputs[2].set_data_from_numpy(np.array([20], dtype=np.uint32))
        c.async_stream_infer("repeat_int32", inputs, request_id="tc-repeat", enable_empty_final_response=True)
        return 5

    responses = []
    for result, error in stream(send):
        if error is not None:
            responses.append({"error": error_of(error)})
            continue
        response = result.get_response()
        final = response.parameters["triton_final_response"].bool_param
        out = result.as_numpy("OUT")
        idx = result.as_numpy("IDX")
        responses.append({"id": response.id, "final": final, "OUT": None if out is None else int(out[0]), "IDX": None if idx is None else int(idx[0])})
    return responses


def statistics():
    stats = client.get_inference_statistics("simple_sequence", as_json=True)["model_stats"]
    return {"names": [s["name"] for s in stats], "inference_count": int(stats[0].get("inference_count", 0))}


def unknown_model():
    inp = grpcclient.InferInput("INPUT0", [1, 16], "INT32")
    inp.set_data_from_numpy(np.zeros((1, 16), dtype=np.int32))
    return client.infer("no_such_model", [inp])


def duplicate_outputs():
    outputs = [grpcclient.InferRequestedOutput("OUTPUT0"), grpcclient.InferRequestedOutput("OUTPUT0")]
    return client.infer("simple", simple_inputs(), outputs=outputs)


def contents_twice():
    """raw_input_contents and contents both given for INPUT0, on the bare stub as a gRPC user may."""
    channel = grpc.insecure_channel(url)
    try:
        stub = service_pb2_grpc.GRPCInferenceServiceStub(channel)
        a, b = int32_pair()
        request = service_pb2.ModelInferRequest(model_name="simple")
        for name in ("INPUT0", "INPUT1"):
            t = request.inputs.add()
            t.name, t.datatype = name, "INT32"
            t.shape.extend([1, 16])
        request.raw_input_contents.extend([a.tobytes(), b.tobytes()])
        request.inputs[0].contents.int_contents[:] = a.reshape(-1).tolist()
        try:
            stub.ModelInfer(request, timeout=10)
            return {"unexpected_success": True}
        except grpc.RpcError as e:
            return {"status": str(e.code()), "message": e.details()}
    finally:
        channel.close()


o.check("live", client.is_server_live)
o.check("ready", client.is_server_ready)
o.check("model_ready", lambda: client.is_model_ready("simple"))
o.check("server_metadata", metadata)
o.check("model_metadata", model_metadata)
o.check("model_config", model_config)
o.check("infer", infer_simple)
o.check("strings", lambda: strings("simple_string"))
o.check("identity", lambda: strings("simple_identity"))
o.check("shared_memory", shared_memory)
o.check("sequence", lambda: sequence(client, grpcclient, "simple_sequence", 3000, [0, 11, 7, 5]))
o.check("dyna_sequence", lambda: sequence(client, grpcclient, "simple_dyna_sequence", 3001, [0, 11, 7, 5]))
o.check("string_dyna_sequence", lambda: sequence(client, grpcclient, "simple_string_dyna_sequence", "3002", [20, -7, -5]))
o.refusal("string_dyna_sequence_bad_id", lambda: sequence(client, grpcclient, "simple_string_dyna_sequence", "tc-not-a-number", [1]))
o.check("sequence_stream", sequence_stream)
o.check("decoupled", decoupled)
o.check("statistics", statistics)
o.refusal("unknown_model", unknown_model)
o.refusal("unknown_model_metadata", lambda: client.get_model_metadata("no_such_model"))
o.refusal("duplicate_outputs", duplicate_outputs)
o.check("contents_twice", contents_twice)
o.refusal("shm_missing_key", lambda: client.register_system_shared_memory("tc_missing", f"/{prefix}_missing", 64))
o.emit()
client.close()
