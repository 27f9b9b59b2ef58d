import { InferenceError } from '@tritium/core';
import type { OrtRuntime, OrtSession, OrtSessionOptions } from './runtime.js';
import { acceleratorNames } from './session-options.js';

/**
 * Creates an onnxruntime session, turning its failures into InferenceErrors that
 * carry onnxruntime's own reason: a file that is not a valid model is INVALID_ARG,
 * a missing execution provider library UNAVAILABLE, bfloat16 tensors UNSUPPORTED.
 */
export async function openSession(runtime: OrtRuntime, modelFile: string, options: OrtSessionOptions, modelName: string): Promise<OrtSession> {
  try {
    return await runtime.createSession(modelFile, options, modelName);
  } catch (error) {
    if (error instanceof InferenceError) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    if (/unsupported data type:? 16\b/i.test(reason)) {
      throw new InferenceError(
        'UNSUPPORTED',
        `model '${modelName}': '${modelFile}' has bfloat16 (BF16) inputs or outputs, which ${runtime.label} cannot pass to or from JavaScript (${reason})`,
        { cause: error },
      );
    }
    const accelerators = acceleratorNames(options);
    if (accelerators.length > 0 && /shared library|provider|adapter|cuda|tensorrt/i.test(reason)) {
      throw new InferenceError(
        'UNAVAILABLE',
        `model '${modelName}': execution accelerator ${accelerators.map((a) => `'${a}'`).join(', ')} is not available with ${runtime.label} on this machine: ${reason}`,
        { cause: error },
      );
    }
    throw new InferenceError('INVALID_ARG', `model '${modelName}': ${runtime.label} cannot load '${modelFile}': ${reason}`, { cause: error });
  }
}

const released = new WeakSet<OrtSession>();

/** Releases a session once (later calls do nothing), ignoring a failure: it is only ever called on the way out. */
export async function releaseSession(runtime: OrtRuntime, session: OrtSession | undefined): Promise<void> {
  if (!session || released.has(session)) return;
  released.add(session);
  try {
    await runtime.release(session);
  } catch {
    // Already released, or the runtime is shutting down.
  }
}
