import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        for request in requests:
            sender = request.get_response_sender()
            sender.send(
                pb_utils.InferenceResponse(
                    [
                        pb_utils.Tensor("OUT", np.array([1], dtype=np.int32)),
                        pb_utils.Tensor("IDX", np.array([0], dtype=np.uint32)),
                    ]
                )
            )
        raise ValueError("decoupled boom")
