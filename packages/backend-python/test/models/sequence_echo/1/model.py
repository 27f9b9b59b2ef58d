import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        return [
            pb_utils.InferenceResponse(
                [
                    pb_utils.Tensor("CORRID", np.array([r.correlation_id()], dtype=np.uint64)),
                    pb_utils.Tensor("FLAGS", np.array([r.flags()], dtype=np.uint32)),
                ]
            )
            for r in requests
        ]
