"""Fault: an exception escapes execute()."""

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        pass

    def execute(self, requests):
        raise ValueError("boom")
