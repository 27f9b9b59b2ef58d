"""Identity on FP32 that also reports how many requests one execute() got."""

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        pass

    def execute(self, requests):
        count = len(requests)
        responses = []
        for request in requests:
            data = pb_utils.get_input_tensor_by_name(request, "INPUT0").as_numpy()
            # The first dimension is this request's own batch size; every row
            # of BATCH_REQUESTS carries the same count.
            batch = data.shape[0]
            seen = np.full((batch, 1), count, dtype=np.int32)
            responses.append(
                pb_utils.InferenceResponse(
                    output_tensors=[
                        pb_utils.Tensor("OUTPUT0", data),
                        pb_utils.Tensor("BATCH_REQUESTS", seen),
                    ]
                )
            )
        return responses

    def finalize(self):
        pass
