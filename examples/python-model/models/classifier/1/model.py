"""Bag-of-words sentiment classifier with its preprocessing built in.

Every request in a dynamic batch is tokenized, all texts are stacked into one
feature matrix, scored with one matrix product, and the rows are handed back
to their requests.
"""

import json
import os
import re

import numpy as np
import triton_python_backend_utils as pb_utils

# Weight of each known word for (negative, neutral, positive). A real model
# would load these from a file trained offline; they are small enough to read
# here.
VOCABULARY = {
    "awful": (2.4, -0.4, -2.0),
    "bad": (1.8, -0.2, -1.6),
    "boring": (1.4, 0.0, -1.4),
    "broken": (2.0, -0.3, -1.7),
    "disappointing": (2.0, -0.2, -1.8),
    "hate": (2.5, -0.5, -2.0),
    "poor": (1.6, -0.1, -1.5),
    "slow": (1.1, 0.1, -1.2),
    "terrible": (2.6, -0.5, -2.1),
    "worst": (2.8, -0.6, -2.2),
    "not": (0.7, 0.1, -0.8),
    "average": (-0.2, 1.2, -0.4),
    "fine": (-0.4, 1.0, 0.2),
    "okay": (-0.3, 1.1, 0.0),
    "ok": (-0.3, 1.1, 0.0),
    "expected": (-0.2, 0.8, -0.1),
    "arrived": (-0.1, 0.6, 0.0),
    "amazing": (-2.0, -0.4, 2.6),
    "excellent": (-2.1, -0.4, 2.7),
    "fast": (-1.0, 0.0, 1.2),
    "good": (-1.5, -0.1, 1.8),
    "great": (-1.9, -0.3, 2.3),
    "happy": (-1.6, -0.2, 2.0),
    "love": (-2.2, -0.4, 2.6),
    "perfect": (-2.0, -0.5, 2.6),
    "recommend": (-1.4, -0.2, 1.8),
}
BIAS = (0.0, 0.5, 0.0)  # an empty or unknown text leans neutral

TOKEN = re.compile(r"[a-z']+")


class TritonPythonModel:
    def initialize(self, args):
        self.model_config = json.loads(args["model_config"])

        # labels.txt sits in the model's directory, next to config.pbtxt.
        labels_path = os.path.join(args["model_repository"], "labels.txt")
        with open(labels_path, encoding="utf-8") as f:
            self.labels = [line.strip() for line in f if line.strip()]

        self.words = sorted(VOCABULARY)
        self.index = {word: i for i, word in enumerate(self.words)}
        self.weights = np.array([VOCABULARY[w] for w in self.words], dtype=np.float32)
        self.bias = np.array(BIAS, dtype=np.float32)
        if self.weights.shape[1] != len(self.labels):
            raise pb_utils.TritonModelException(
                "{} has {} labels but the weights have {} classes".format(
                    labels_path, len(self.labels), self.weights.shape[1]
                )
            )

        output = pb_utils.get_output_config_by_name(self.model_config, "PROBABILITIES")
        self.probability_dtype = pb_utils.triton_string_to_numpy(output["data_type"])

    def features(self, text):
        """Word counts over the vocabulary; unknown words are dropped."""
        row = np.zeros(len(self.words), dtype=np.float32)
        for token in TOKEN.findall(text.lower()):
            i = self.index.get(token)
            if i is not None:
                row[i] += 1.0
        return row

    def execute(self, requests):
        # Preprocess every text of every request into one matrix.
        texts = []
        sizes = []
        for request in requests:
            raw = pb_utils.get_input_tensor_by_name(request, "TEXT").as_numpy()
            rows = raw.reshape(-1)
            sizes.append(len(rows))
            for value in rows:
                if isinstance(value, bytes):
                    value = value.decode("utf-8", errors="replace")
                texts.append(str(value))
        x = np.zeros((len(texts), len(self.words)), dtype=np.float32)
        for i, text in enumerate(texts):
            x[i] = self.features(text)

        # Linear layer and softmax, for the whole batch at once.
        logits = x @ self.weights + self.bias
        logits -= logits.max(axis=1, keepdims=True)
        exp = np.exp(logits)
        probabilities = (exp / exp.sum(axis=1, keepdims=True)).astype(
            self.probability_dtype
        )
        labels = np.array(
            [self.labels[i].encode("utf-8") for i in probabilities.argmax(axis=1)],
            dtype=np.object_,
        )

        # Hand each request its own rows back.
        responses = []
        start = 0
        for size in sizes:
            end = start + size
            responses.append(
                pb_utils.InferenceResponse(
                    output_tensors=[
                        pb_utils.Tensor("PROBABILITIES", probabilities[start:end]),
                        pb_utils.Tensor("LABEL", labels[start:end].reshape(-1, 1)),
                    ]
                )
            )
            start = end
        return responses

    def finalize(self):
        pass
