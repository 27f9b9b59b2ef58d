"""Asynchronous BLS: two concurrent calls per request, awaited together.

One call asks the add/sub model for OUTPUT0 only, the other for OUTPUT1 only;
both are in flight at once (asyncio.gather) and the response joins them. The
called model batches, so each [16] vector goes out as a batch of one, [1, 16].
"""

import asyncio
import json

import triton_python_backend_utils as pb_utils

DEFAULT_MODEL = "add_sub_onnx"


def target_model(request):
    params = json.loads(request.parameters() or "{}")
    return params.get("model_name", DEFAULT_MODEL)


async def fetch(model_name, output_name, in0, in1):
    """Ask model_name for output_name alone and return it as a numpy array."""
    call = pb_utils.InferenceRequest(
        model_name=model_name,
        requested_output_names=[output_name],
        inputs=[
            pb_utils.Tensor("INPUT0", in0.reshape(1, -1)),
            pb_utils.Tensor("INPUT1", in1.reshape(1, -1)),
        ],
    )
    answer = await call.async_exec()
    if answer.has_error():
        raise pb_utils.TritonModelException(answer.error().message())
    return pb_utils.get_output_tensor_by_name(answer, output_name).as_numpy()


class TritonPythonModel:
    def initialize(self, args):
        pass

    async def execute(self, requests):
        responses = []
        for request in requests:
            in0 = pb_utils.get_input_tensor_by_name(request, "INPUT0").as_numpy()
            in1 = pb_utils.get_input_tensor_by_name(request, "INPUT1").as_numpy()
            model_name = target_model(request)

            total, difference = await asyncio.gather(
                fetch(model_name, "OUTPUT0", in0, in1),
                fetch(model_name, "OUTPUT1", in0, in1),
            )
            responses.append(
                pb_utils.InferenceResponse(
                    output_tensors=[
                        pb_utils.Tensor("OUTPUT0", total.reshape(in0.shape)),
                        pb_utils.Tensor("OUTPUT1", difference.reshape(in1.shape)),
                    ]
                )
            )
        return responses

    def finalize(self):
        pass
