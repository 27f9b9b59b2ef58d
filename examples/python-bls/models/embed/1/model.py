"""Embeds text with the hashing trick: each word adds +1 or -1 to one of
DIM buckets chosen by a stable hash; the vector is then scaled to length 1.
Texts that share words get vectors that point the same way."""

import re
import zlib

import numpy as np
import triton_python_backend_utils as pb_utils

DIM = 64
TOKEN = re.compile(r"[a-z0-9']+")


def embed(text):
    vector = np.zeros(DIM, dtype=np.float32)
    for token in TOKEN.findall(text.lower()):
        h = zlib.crc32(token.encode("utf-8"))
        vector[h % DIM] += 1.0 if (h >> 16) & 1 else -1.0
    norm = np.linalg.norm(vector)
    return vector / norm if norm > 0 else vector


class TritonPythonModel:
    def initialize(self, args):
        pass

    def execute(self, requests):
        responses = []
        for request in requests:
            texts = pb_utils.get_input_tensor_by_name(request, "TEXT").as_numpy()
            rows = [
                embed(t.decode("utf-8") if isinstance(t, bytes) else str(t))
                for t in texts.reshape(-1)
            ]
            matrix = np.stack(rows) if rows else np.zeros((0, DIM), np.float32)
            responses.append(
                pb_utils.InferenceResponse([pb_utils.Tensor("EMBEDDING", matrix)])
            )
        return responses
