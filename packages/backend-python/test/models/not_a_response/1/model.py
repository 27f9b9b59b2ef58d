"""Fault: execute() returns one item per request, but not InferenceResponses."""

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        pass

    def execute(self, requests):
        return [{"a": 1} for _ in requests]
