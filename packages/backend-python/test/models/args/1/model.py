import json

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        self.args = args

    def execute(self, requests):
        text = json.dumps(self.args).encode("utf-8")
        return [
            pb_utils.InferenceResponse(
                output_tensors=[pb_utils.Tensor("ARGS", np.array([text], dtype=np.object_))]
            )
            for _ in requests
        ]
