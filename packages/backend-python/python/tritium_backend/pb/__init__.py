"""The model-facing API that triton_python_backend_utils re-exports.

types          constants and datatype maps
errors         TritonError, TritonModelException
tensor         Tensor, BYTES (de)serialization, dtype helpers
requests       InferenceRequest/Response, response senders, ResponseIterator, helpers
model_config   ModelConfig (auto_complete_config)
log            Logger, LogLevel
metrics        MetricFamily, Metric, MetricKind
model_control  load_model, unload_model, is_model_ready

They reach the running stub through tritium_backend.connection only.
"""
