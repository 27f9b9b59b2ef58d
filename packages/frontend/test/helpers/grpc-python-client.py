"""A Python client built from Triton's own .proto files, talking to Tritium's gRPC frontend.

Usage: grpc-python-client.py <stub directory> <port>. Prints one JSON object of what it saw.
"""
import json
import struct
import sys

sys.path.insert(0, sys.argv[1])
import grpc  # noqa: E402
import grpc_service_pb2 as service  # noqa: E402
import grpc_service_pb2_grpc as service_grpc  # noqa: E402
import health_pb2 as health  # noqa: E402
import health_pb2_grpc as health_grpc  # noqa: E402

channel = grpc.insecure_channel(f"127.0.0.1:{sys.argv[2]}")
stub = service_grpc.GRPCInferenceServiceStub(channel)
seen = {}

seen["live"] = stub.ServerLive(service.ServerLiveRequest()).live
seen["health"] = health.HealthCheckResponse.ServingStatus.Name(health_grpc.HealthStub(channel).Check(health.HealthCheckRequest()).status)

metadata = stub.ModelMetadata(service.ModelMetadataRequest(name="simple"))
seen["metadata"] = {"name": metadata.name, "inputs": [[t.name, t.datatype, list(t.shape)] for t in metadata.inputs]}

config = stub.ModelConfig(service.ModelConfigRequest(name="simple")).config
seen["config"] = {
    "max_batch_size": config.max_batch_size,
    "dims": list(config.input[0].dims),
    "priority_queue_policy": {str(k): v.max_queue_size for k, v in config.dynamic_batching.priority_queue_policy.items()},
    "kind": config.instance_group[0].kind,
}

request = service.ModelInferRequest(model_name="simple", id="py-1")
tensor = request.inputs.add(name="INPUT0", datatype="FP32", shape=[1, 4])
request.raw_input_contents.append(struct.pack("<4f", 1.5, 2.5, 3.5, 4.5))
response = stub.ModelInfer(request)
seen["infer"] = {
    "id": response.id,
    "model_version": response.model_version,
    "outputs": [[o.name, o.datatype, list(o.shape)] for o in response.outputs],
    "values": list(struct.unpack("<4f", response.raw_output_contents[0])),
}

def stream_requests():
    decoupled = service.ModelInferRequest(model_name="repeat", id="py-stream")
    decoupled.inputs.add(name="IN", datatype="INT32", shape=[1])
    decoupled.raw_input_contents.append(struct.pack("<i", 7))
    decoupled.parameters["count"].int64_param = 2
    decoupled.parameters["triton_enable_empty_final_response"].bool_param = True
    yield decoupled
    yield service.ModelInferRequest(model_name="nope", id="py-error")

seen["stream"] = [
    {
        "error": message.error_message,
        "id": message.infer_response.id,
        "final": message.infer_response.parameters["triton_final_response"].bool_param,
        "values": [struct.unpack("<i", raw)[0] for raw in message.infer_response.raw_output_contents],
    }
    for message in stub.ModelStreamInfer(stream_requests())
]

try:
    stub.ModelInfer(service.ModelInferRequest(model_name="repeat"))
except grpc.RpcError as error:
    seen["decoupled_infer"] = [error.code().name, error.details()]

print(json.dumps(seen))
