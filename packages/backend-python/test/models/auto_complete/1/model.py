"""A model with no config.pbtxt: auto_complete_config() supplies it.

INPUT0, INPUT1 FP32 [4] -> OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1,
with max_batch_size 4 and dynamic batching.
"""

import json

import triton_python_backend_utils as pb_utils

INPUTS = [
    {"name": "INPUT0", "data_type": "TYPE_FP32", "dims": [4]},
    {"name": "INPUT1", "data_type": "TYPE_FP32", "dims": [4]},
]
OUTPUTS = [
    {"name": "OUTPUT0", "data_type": "TYPE_FP32", "dims": [4]},
    {"name": "OUTPUT1", "data_type": "TYPE_FP32", "dims": [4]},
]


class TritonPythonModel:
    @staticmethod
    def auto_complete_config(auto_complete_model_config):
        current = auto_complete_model_config.as_dict()
        have_inputs = {tensor["name"] for tensor in current["input"]}
        have_outputs = {tensor["name"] for tensor in current["output"]}

        # Only add what the configuration does not name already, so a partial
        # config.pbtxt, if someone writes one, still wins.
        for tensor in INPUTS:
            if tensor["name"] not in have_inputs:
                auto_complete_model_config.add_input(tensor)
        for tensor in OUTPUTS:
            if tensor["name"] not in have_outputs:
                auto_complete_model_config.add_output(tensor)

        auto_complete_model_config.set_max_batch_size(4)
        auto_complete_model_config.set_dynamic_batching()
        return auto_complete_model_config

    def initialize(self, args):
        self.model_config = json.loads(args["model_config"])

    def execute(self, requests):
        responses = []
        for request in requests:
            a = pb_utils.get_input_tensor_by_name(request, "INPUT0").as_numpy()
            b = pb_utils.get_input_tensor_by_name(request, "INPUT1").as_numpy()
            responses.append(
                pb_utils.InferenceResponse(
                    output_tensors=[
                        pb_utils.Tensor("OUTPUT0", a + b),
                        pb_utils.Tensor("OUTPUT1", a - b),
                    ]
                )
            )
        return responses
