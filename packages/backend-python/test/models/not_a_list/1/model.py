"""Fault: execute() returns a bare InferenceResponse instead of a list."""

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        pass

    def execute(self, requests):
        data = pb_utils.get_input_tensor_by_name(requests[0], "INPUT0").as_numpy()
        return pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", data)])
