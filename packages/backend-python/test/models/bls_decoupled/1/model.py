"""BLS on a decoupled model: sums what "repeat" streams back."""

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        pass

    def execute(self, requests):
        responses = []
        for request in requests:
            inputs = [pb_utils.get_input_tensor_by_name(request, "IN")]
            delay = pb_utils.get_input_tensor_by_name(request, "DELAY")
            if delay is not None:
                inputs.append(delay)

            call = pb_utils.InferenceRequest(
                model_name="repeat",
                requested_output_names=["OUT"],
                inputs=inputs,
            )
            total = 0
            count = 0
            for answer in call.exec(decoupled=True):
                if answer.has_error():
                    raise pb_utils.TritonModelException(answer.error().message())
                # The stream ends with a response that only carries the FINAL
                # flag and no outputs.
                out = pb_utils.get_output_tensor_by_name(answer, "OUT")
                if out is None:
                    continue
                total += int(out.as_numpy()[0])
                count += 1

            responses.append(
                pb_utils.InferenceResponse(
                    output_tensors=[
                        pb_utils.Tensor("SUM", np.array([total], np.int32)),
                        pb_utils.Tensor("COUNT", np.array([count], np.int32)),
                    ]
                )
            )
        return responses

    def finalize(self):
        pass
