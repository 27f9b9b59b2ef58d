import { DETACHED } from '../../core/test/helpers/detached.js';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InferenceError, validateModelConfig } from '@tritium/core';
import { onnxBackend } from '../src/index.js';

/**
 * Loads a committed test model on one instance and prints the error it fails with as
 * JSON (`{}` when it loads). Tests run it as a child process (`node --import tsx`, from
 * the repository root) where onnxruntime writes to stderr natively, which no JavaScript
 * in the test's own process can catch: the test captures the child's stderr instead.
 * Arguments: the model's name in models/, its config as JSON, the instance kind.
 */
const [artifact, configJson, kind] = process.argv.slice(2) as [string, string, string];
const models = fileURLToPath(new URL('../models/', import.meta.url));
const name = 'child';
let outcome = {};
try {
  const config = validateModelConfig({ name, backend: 'onnxruntime', ...JSON.parse(configJson) });
  const files = { modelDirectory: models, versionDirectory: models, modelPath: join(models, `${artifact}.onnx`), version: 1 };
  const model = await onnxBackend().createModel({ ...files, name, config, ...DETACHED });
  // Only the load's outcome matters here: health reports are not followed.
  await model.createInstance({ name: `${name}_0`, kind, health: { recovering() {}, restored() {}, failed() {} } });
} catch (error) {
  const { code, message } = InferenceError.from(error);
  outcome = { code, message };
}
console.log(JSON.stringify(outcome));
