"""SCORE = cosine similarity of A and B, row by row."""

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        pass

    def execute(self, requests):
        responses = []
        for request in requests:
            a = pb_utils.get_input_tensor_by_name(request, "A").as_numpy()
            b = pb_utils.get_input_tensor_by_name(request, "B").as_numpy()
            norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
            dots = np.sum(a * b, axis=1)
            cosine = np.divide(
                dots, norms, out=np.zeros_like(dots), where=norms > 0
            )
            responses.append(
                pb_utils.InferenceResponse(
                    [pb_utils.Tensor("SCORE", cosine.reshape(-1, 1).astype(np.float32))]
                )
            )
        return responses
