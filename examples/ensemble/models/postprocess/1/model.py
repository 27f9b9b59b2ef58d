import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            scores = pb_utils.get_input_tensor_by_name(request, "SCORES").as_numpy()
            top = np.argsort(-scores, axis=1)[:, :3].astype(np.int32)
            top_scores = np.take_along_axis(scores, top, axis=1).astype(np.float32)
            labels = np.array([[("class_%d" % c).encode() for c in row] for row in top], dtype=np.object_)
            responses.append(
                pb_utils.InferenceResponse(
                    [
                        pb_utils.Tensor("TOP_CLASSES", top),
                        pb_utils.Tensor("TOP_SCORES", top_scores),
                        pb_utils.Tensor("TOP_LABELS", labels),
                    ]
                )
            )
        return responses
