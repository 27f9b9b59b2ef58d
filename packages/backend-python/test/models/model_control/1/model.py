import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            op = pb_utils.get_input_tensor_by_name(request, "OP").as_numpy()[0].decode()
            # Names as bytes (a BYTES element, numpy.bytes_) and as str: Triton takes both.
            name = pb_utils.get_input_tensor_by_name(request, "NAME").as_numpy()[0]
            try:
                if op == "load":
                    # An optional CONFIG: the load's config override, Triton's JSON form.
                    config = pb_utils.get_input_tensor_by_name(request, "CONFIG")
                    if config is None:
                        pb_utils.load_model(model_name=name)
                    else:
                        pb_utils.load_model(model_name=name, config=config.as_numpy()[0].decode())
                elif op == "unload":
                    pb_utils.unload_model(model_name=name.decode())
                elif op == "unload_dependents":
                    pb_utils.unload_model(model_name=name.decode(), unload_dependents=True)
                ready = pb_utils.is_model_ready(model_name=name, model_version=b"")
                responses.append(
                    pb_utils.InferenceResponse(
                        output_tensors=[pb_utils.Tensor("READY", np.array([ready], dtype=np.bool_))]
                    )
                )
            except pb_utils.TritonModelException as e:
                responses.append(pb_utils.InferenceResponse(error=pb_utils.TritonError(str(e))))
        return responses
