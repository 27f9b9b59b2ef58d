"""Fault: decoupled, yet execute() returns responses like a plain model."""

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        pass

    def execute(self, requests):
        responses = []
        for request in requests:
            data = pb_utils.get_input_tensor_by_name(request, "INPUT0").as_numpy()
            responses.append(
                pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", data)])
            )
        return responses
