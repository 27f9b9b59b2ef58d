"""Reports the interpreter it runs under: sys.executable and sys.prefix."""

import sys

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        self.executable = sys.executable.encode("utf-8")
        self.prefix = sys.prefix.encode("utf-8")

    def execute(self, requests):
        responses = []
        for _ in requests:
            responses.append(
                pb_utils.InferenceResponse(
                    output_tensors=[
                        pb_utils.Tensor(
                            "EXECUTABLE", np.array([self.executable], dtype=np.object_)
                        ),
                        pb_utils.Tensor(
                            "PREFIX", np.array([self.prefix], dtype=np.object_)
                        ),
                    ]
                )
            )
        return responses
