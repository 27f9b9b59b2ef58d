"""Shared by the tritonclient drivers: each driver records what it sees in one dict and
prints it as one JSON line; the TypeScript test makes the assertions."""

import json
import sys
import traceback

import numpy as np
from tritonclient.utils import InferenceServerException


def error_of(e):
    """An InferenceServerException as {status, message} (status: HTTP code, or gRPC's StatusCode.X)."""
    if isinstance(e, InferenceServerException):
        return {"status": e.status(), "message": e.message()}
    return {"status": "exception", "message": f"{type(e).__name__}: {e}"}


class Observations:
    def __init__(self):
        self.seen = {}

    def check(self, key, fn):
        """Records fn()'s value under key, or the error it raised as {"error": {status, message}}."""
        try:
            self.seen[key] = fn()
        except Exception as e:  # noqa: BLE001 - every failure is an observation
            self.seen[key] = {"error": error_of(e)}
            if not isinstance(e, InferenceServerException):
                self.seen[key]["error"]["trace"] = traceback.format_exc()[-1500:]

    def refusal(self, key, fn):
        """For a call that should fail: its error, or {"unexpected_success": value}."""
        try:
            value = fn()
            self.seen[key] = {"unexpected_success": repr(value)[:500]}
        except Exception as e:  # noqa: BLE001
            self.seen[key] = error_of(e)

    def emit(self):
        print(json.dumps(self.seen, default=to_json))
        sys.stdout.flush()


def to_json(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def int32_pair():
    """Inputs of `simple`: INPUT0 = 0..15, INPUT1 = 1s, as [1, 16]."""
    return np.arange(16, dtype=np.int32).reshape(1, 16), np.ones((1, 16), dtype=np.int32)


def sequence(client, protocol, model, sequence_id, values):
    """One sequence, one synchronous request per value, through `client` of `protocol`
    (tritonclient.http or tritonclient.grpc); returns the OUTPUT values."""
    answers = []
    for i, value in enumerate(values):
        inp = protocol.InferInput("INPUT", [1, 1], "INT32")
        inp.set_data_from_numpy(np.array([[value]], dtype=np.int32))
        result = client.infer(model, [inp], sequence_id=sequence_id, sequence_start=(i == 0), sequence_end=(i == len(values) - 1))
        answers.append(int(result.as_numpy("OUTPUT")[0][0]))
    return answers
