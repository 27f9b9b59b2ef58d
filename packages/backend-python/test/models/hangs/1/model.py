"""Fault: execute() does not come back for an hour."""

import time

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        pass

    def execute(self, requests):
        time.sleep(3600)
        responses = []
        for request in requests:
            data = pb_utils.get_input_tensor_by_name(request, "INPUT0").as_numpy()
            responses.append(
                pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", data)])
            )
        return responses
