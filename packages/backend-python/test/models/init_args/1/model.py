# Triton's qa/python_models/init_args/model.py; the repository path is the test's, not /opt/tritonserver's.
import os

import numpy as np
import triton_python_backend_utils as pb_utils


def check_init_args(args):
    expected_args = {
        "model_name": "init_args",
        "model_instance_name": "init_args_0_0",
        "model_instance_kind": "CPU",
        "model_instance_device_id": "0",
        "model_version": "1",
        "model_repository": os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    }
    for arg in expected_args:
        if args[arg] != expected_args[arg]:
            raise pb_utils.TritonModelException(
                arg + ' does not contain correct value. Expected "' + expected_args[arg] + ", got " + args[arg]
            )


class TritonPythonModel:
    def initialize(self, args):
        self.args = args
        check_init_args(self.args)

    def execute(self, requests):
        keys = [
            "model_config",
            "model_instance_kind",
            "model_instance_name",
            "model_instance_device_id",
            "model_repository",
            "model_version",
            "model_name",
        ]
        correct_keys = sum(1 for key in keys if key in self.args)
        return [
            pb_utils.InferenceResponse([pb_utils.Tensor("OUT", np.array([correct_keys], dtype=np.float32))])
            for _ in requests
        ]
