import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        family = pb_utils.MetricFamily(
            name="requests_seen_total",
            description="Requests this model has seen",
            kind=pb_utils.MetricFamily.COUNTER,
        )
        self.counter = family.Metric(labels={"model": args["model_name"]})

    def execute(self, requests):
        self.counter.increment(len(requests))
        return [
            pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", pb_utils.get_input_tensor_by_name(r, "INPUT0").as_numpy())])
            for r in requests
        ]
