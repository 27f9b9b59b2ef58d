"""Waits for cancellation and answers a cancelled request with CANCELLED."""

import time

import triton_python_backend_utils as pb_utils

STEP = 0.01  # seconds between looks at is_cancelled()
LIMIT = 10.0  # seconds before giving up and answering normally


class TritonPythonModel:
    def initialize(self, args):
        pass

    def execute(self, requests):
        responses = [None] * len(requests)
        deadline = time.monotonic() + LIMIT
        while True:
            for i, request in enumerate(requests):
                if responses[i] is None and request.is_cancelled():
                    responses[i] = pb_utils.InferenceResponse(
                        error=pb_utils.TritonError(
                            "cancelled", code=pb_utils.TritonError.CANCELLED
                        )
                    )
            if all(r is not None for r in responses) or time.monotonic() >= deadline:
                break
            time.sleep(STEP)

        for i, request in enumerate(requests):
            if responses[i] is None:
                data = pb_utils.get_input_tensor_by_name(request, "INPUT0").as_numpy()
                responses[i] = pb_utils.InferenceResponse(
                    output_tensors=[pb_utils.Tensor("OUTPUT0", data)]
                )
        return responses
