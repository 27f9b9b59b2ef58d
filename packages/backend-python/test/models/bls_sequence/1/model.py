import json

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            params = json.loads(request.parameters())
            flags = 0
            if params.get("start"):
                flags |= pb_utils.TRITONSERVER_REQUEST_FLAG_SEQUENCE_START
            if params.get("end"):
                flags |= pb_utils.TRITONSERVER_REQUEST_FLAG_SEQUENCE_END
            inner = pb_utils.InferenceRequest(
                model_name="sequence_echo",
                inputs=[pb_utils.get_input_tensor_by_name(request, "INPUT0")],
                requested_output_names=["CORRID", "FLAGS"],
                correlation_id=int(params["sequence"]),
                flags=flags,
                request_id="inner",
                timeout=1000000,
            ).exec()
            if inner.has_error():
                raise pb_utils.TritonModelException(inner.error().message())
            responses.append(pb_utils.InferenceResponse(inner.output_tensors()))
        return responses
