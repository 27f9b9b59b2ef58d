"""Copies each INPUT_<TYPE> the request carries to OUTPUT_<TYPE>.

All inputs are optional, so a request may carry any subset of them; only the
outputs whose input was given are returned.
"""

import json

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        # Pairs of (input name, output name, numpy dtype), from the config.
        self.pairs = []
        for tensor in config["input"]:
            suffix = tensor["name"][len("INPUT_"):]
            output = pb_utils.get_output_config_by_name(config, "OUTPUT_" + suffix)
            self.pairs.append(
                (
                    tensor["name"],
                    output["name"],
                    pb_utils.triton_string_to_numpy(output["data_type"]),
                )
            )

    def execute(self, requests):
        responses = []
        for request in requests:
            outputs = []
            for input_name, output_name, dtype in self.pairs:
                tensor = pb_utils.get_input_tensor_by_name(request, input_name)
                if tensor is None:
                    continue
                outputs.append(
                    pb_utils.Tensor(output_name, tensor.as_numpy().astype(dtype))
                )
            responses.append(pb_utils.InferenceResponse(output_tensors=outputs))
        return responses
