"""Synchronous BLS: one blocking call to an add/sub model per request.

The called model batches (max_batch_size > 0), so each [16] vector is sent as
a batch of one, [1, 16], and the answer is reshaped back to [16]. With the
request parameter "child_trace", the call is made with trace=request.trace().
"""

import json

import triton_python_backend_utils as pb_utils

DEFAULT_MODEL = "add_sub_onnx"


def target_model(request):
    """The model to call: the request parameter "model_name", or the default."""
    params = json.loads(request.parameters() or "{}")
    return params.get("model_name", DEFAULT_MODEL)


class TritonPythonModel:
    def initialize(self, args):
        pass

    def execute(self, requests):
        responses = []
        for request in requests:
            in0 = pb_utils.get_input_tensor_by_name(request, "INPUT0").as_numpy()
            in1 = pb_utils.get_input_tensor_by_name(request, "INPUT1").as_numpy()

            traced = {}
            if json.loads(request.parameters() or "{}").get("child_trace"):
                # As in Triton: passing the request's trace makes the call its child in traces.
                traced["trace"] = request.trace()
            call = pb_utils.InferenceRequest(
                model_name=target_model(request),
                requested_output_names=["OUTPUT0", "OUTPUT1"],
                inputs=[
                    pb_utils.Tensor("INPUT0", in0.reshape(1, -1)),
                    pb_utils.Tensor("INPUT1", in1.reshape(1, -1)),
                ],
                **traced,
            )
            answer = call.exec()
            if answer.has_error():
                raise pb_utils.TritonModelException(answer.error().message())

            out0 = pb_utils.get_output_tensor_by_name(answer, "OUTPUT0").as_numpy()
            out1 = pb_utils.get_output_tensor_by_name(answer, "OUTPUT1").as_numpy()
            responses.append(
                pb_utils.InferenceResponse(
                    output_tensors=[
                        pb_utils.Tensor("OUTPUT0", out0.reshape(in0.shape)),
                        pb_utils.Tensor("OUTPUT1", out1.reshape(in1.shape)),
                    ]
                )
            )
        return responses

    def finalize(self):
        pass
