"""Fault: the Python process dies in the middle of a request.

A request whose INPUT0[0] is 1 makes the process print a line to stderr and
exit at once, without answering (the line must reach the server's log, never
the request's error); any other request is echoed back (OUTPUT0 = INPUT0).
"""

import os
import sys

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        pass

    def execute(self, requests):
        responses = []
        for request in requests:
            data = pb_utils.get_input_tensor_by_name(request, "INPUT0").as_numpy()
            if data.size > 0 and data.flat[0] == 1:
                sys.stderr.write("exits_midrequest: private output\n")
                sys.stderr.flush()
                os._exit(1)
            responses.append(
                pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", data)])
            )
        return responses
