"""Writes to Triton's log through pb_utils.Logger at every level.

Each message names the stage and the level, e.g. "logger: execute warning",
so a test can look for each one.
"""

import triton_python_backend_utils as pb_utils


def log_all(stage):
    logger = pb_utils.Logger
    logger.log_info("logger: {} info".format(stage))
    logger.log_warn("logger: {} warning".format(stage))
    logger.log_error("logger: {} error".format(stage))
    logger.log_verbose("logger: {} verbose".format(stage))
    logger.log("logger: {} info via log()".format(stage), logger.INFO)


# A line logged while the module is imported, before the model exists.
pb_utils.Logger.log_info("logger: imported")


class TritonPythonModel:
    def initialize(self, args):
        log_all("initialize")

    def execute(self, requests):
        log_all("execute")
        responses = []
        for request in requests:
            data = pb_utils.get_input_tensor_by_name(request, "INPUT0").as_numpy()
            responses.append(
                pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", data)])
            )
        return responses

    def finalize(self):
        log_all("finalize")
