import argparse
import json
import sys
import unittest

import numpy as np
import triton_python_backend_utils as pb_utils


def bls(**kwargs):
    return pb_utils.InferenceRequest(inputs=[], **kwargs)


class StringArguments(unittest.TestCase):
    def test_argv_is_tritons(self):
        self.assertEqual(sys.argv, [""])

    def test_bytes_are_read_as_utf8(self):
        request = bls(
            model_name=np.array([b"add_sub"])[0],
            requested_output_names=np.array([b"OUTPUT0", b"OUTPUT1"]),
            request_id="ré".encode("utf-8"),
        )
        self.assertEqual(set(request.requested_output_names()), {"OUTPUT0", "OUTPUT1"})
        self.assertEqual(request.request_id(), "ré")

    def test_other_types_are_refused(self):
        with self.assertRaises(TypeError):
            bls(model_name=5, requested_output_names=[])
        with self.assertRaises(TypeError):
            bls(model_name="add_sub", requested_output_names="OUTPUT0")
        with self.assertRaises(TypeError):
            bls(model_name="add_sub", requested_output_names=[1])
        with self.assertRaises(TypeError):
            bls(model_name="add_sub", requested_output_names=[], request_id=1)


class TritonPythonModel:
    def initialize(self, args):
        # With the stub's flags in sys.argv, parse_args() exits with status 2.
        argparse.ArgumentParser().parse_args()
        test = unittest.main("model", exit=False)
        self.tests = {"run": test.result.testsRun, "ok": test.result.wasSuccessful()}

    def execute(self, requests):
        responses = []
        for request in requests:
            call = pb_utils.InferenceRequest(
                model_name=np.array([b"add_sub"])[0],
                requested_output_names=[b"OUTPUT0", "OUTPUT1"],
                inputs=[pb_utils.get_input_tensor_by_name(request, n) for n in ("INPUT0", "INPUT1")],
            )
            answer = call.exec()
            if answer.has_error():
                raise pb_utils.TritonModelException(answer.error().message())
            tests = pb_utils.Tensor("TESTS", np.array([json.dumps(self.tests)], dtype=np.object_))
            responses.append(pb_utils.InferenceResponse(answer.output_tensors() + [tests]))
        return responses
