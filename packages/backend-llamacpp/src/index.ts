export { llamacppBackend, createBackend } from './backend.js';
export { ENGINE_SETTINGS_FILE, type EngineSettings } from './engine-settings.js';
export { INPUTS, OUTPUTS, type FinishReason } from './tensors.js';
export { DEFAULT_SAMPLING, parseSamplingParameters, type SamplingParameters } from './sampling-parameters.js';
