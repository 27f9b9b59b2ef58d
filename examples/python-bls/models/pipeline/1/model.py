"""A BLS pipeline over two other models.

For each request: embed QUERY and DOCUMENT concurrently (two async BLS calls
to "embed"), then ask "score" for the cosine similarity of the two
embeddings. All requests of one execute() call run concurrently too.
"""

import asyncio
import json

import triton_python_backend_utils as pb_utils


async def infer(model_name, inputs, output_name):
    """One BLS call; returns the named output as a numpy array."""
    call = pb_utils.InferenceRequest(
        model_name=model_name,
        requested_output_names=[output_name],
        inputs=inputs,
    )
    answer = await call.async_exec()
    if answer.has_error():
        raise pb_utils.TritonModelException(
            "{} failed: {}".format(model_name, answer.error().message())
        )
    return pb_utils.get_output_tensor_by_name(answer, output_name).as_numpy()


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        parameters = config.get("parameters", {})
        self.threshold = float(
            parameters.get("threshold", {}).get("string_value", "0.3")
        )

    async def handle(self, request):
        query = pb_utils.get_input_tensor_by_name(request, "QUERY").as_numpy()
        document = pb_utils.get_input_tensor_by_name(request, "DOCUMENT").as_numpy()

        # The two embeddings do not depend on each other: request both at once.
        query_vec, document_vec = await asyncio.gather(
            infer("embed", [pb_utils.Tensor("TEXT", query)], "EMBEDDING"),
            infer("embed", [pb_utils.Tensor("TEXT", document)], "EMBEDDING"),
        )
        score = await infer(
            "score",
            [pb_utils.Tensor("A", query_vec), pb_utils.Tensor("B", document_vec)],
            "SCORE",
        )
        return pb_utils.InferenceResponse(
            output_tensors=[
                pb_utils.Tensor("SCORE", score),
                pb_utils.Tensor("RELEVANT", score >= self.threshold),
            ]
        )

    async def execute(self, requests):
        results = await asyncio.gather(
            *(self.handle(r) for r in requests), return_exceptions=True
        )
        # One failed request gets an error response; the others still succeed.
        responses = []
        for result in results:
            if isinstance(result, Exception):
                responses.append(
                    pb_utils.InferenceResponse(error=pb_utils.TritonError(str(result)))
                )
            else:
                responses.append(result)
        return responses
