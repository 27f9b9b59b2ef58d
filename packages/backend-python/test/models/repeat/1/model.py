"""Decoupled model: streams the elements of IN back one response at a time."""

import json
import threading
import time

import numpy as np
import triton_python_backend_utils as pb_utils

# How often a waiting sender looks at is_cancelled(), in seconds.
POLL = 0.01


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        if not pb_utils.using_decoupled_model_transaction_policy(config):
            raise pb_utils.TritonModelException(
                "model '{}' sends several responses per request and needs "
                "model_transaction_policy {{ decoupled: true }}".format(
                    args["model_name"]
                )
            )
        self.threads = set()
        self.lock = threading.Lock()

    def execute(self, requests):
        for request in requests:
            sender = request.get_response_sender()
            values = pb_utils.get_input_tensor_by_name(request, "IN").as_numpy()

            delay_tensor = pb_utils.get_input_tensor_by_name(request, "DELAY")
            if delay_tensor is None:
                delays = np.zeros(values.shape, dtype=np.uint32)
            else:
                delays = delay_tensor.as_numpy()
            if delays.shape != values.shape:
                error = pb_utils.TritonError(
                    "DELAY has shape {} but IN has shape {}".format(
                        list(delays.shape), list(values.shape)
                    ),
                    code=pb_utils.TritonError.INVALID_ARG,
                )
                sender.send(
                    pb_utils.InferenceResponse(error=error),
                    flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL,
                )
                continue

            thread = threading.Thread(
                target=self.respond, args=(sender, values, delays), daemon=True
            )
            with self.lock:
                self.threads.add(thread)
            thread.start()

            # Return after WAIT ms, whether or not the responses are all out.
            wait_tensor = pb_utils.get_input_tensor_by_name(request, "WAIT")
            if wait_tensor is not None:
                time.sleep(int(wait_tensor.as_numpy()[0]) / 1000.0)
        return None

    def respond(self, sender, values, delays):
        try:
            for idx in range(values.size):
                if not self.pause(sender, int(delays[idx]) / 1000.0):
                    break
                sender.send(
                    pb_utils.InferenceResponse(
                        output_tensors=[
                            pb_utils.Tensor("OUT", np.array([values[idx]], np.int32)),
                            pb_utils.Tensor("IDX", np.array([idx], np.uint32)),
                        ]
                    )
                )
            sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
        finally:
            with self.lock:
                self.threads.discard(threading.current_thread())

    @staticmethod
    def pause(sender, seconds):
        """Sleeps for `seconds`; False as soon as the request is cancelled."""
        deadline = time.monotonic() + seconds
        while True:
            if sender.is_cancelled():
                return False
            left = deadline - time.monotonic()
            if left <= 0:
                return True
            time.sleep(min(POLL, left))

    def finalize(self):
        # Let the responses still in flight finish before the model goes away.
        with self.lock:
            pending = list(self.threads)
        for thread in pending:
            thread.join()
