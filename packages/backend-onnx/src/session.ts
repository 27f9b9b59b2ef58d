import { InferenceError } from '@tritium/core/backend';
import type { ExecutionPool } from './execution-pool.js';
import { InlineSession } from './inline-session.js';
import type { OnnxSession, SessionThread } from './onnx-session.js';
import type { OrtRuntime, OrtSessionOptions } from './runtime.js';
import { acceleratorNames } from './session-options.js';

/** Everything needed to open one session of a model. */
export interface SessionSpec {
  readonly runtime: OrtRuntime;
  readonly modelFile: string;
  readonly options: OrtSessionOptions;
  readonly modelName: string;
  /** Where worker sessions are hosted. */
  readonly pool: ExecutionPool;
  /** The sessions of one loaded model, which the pool places on different threads; the model's name by default. */
  readonly group?: string;
}

/**
 * Opens a session on a thread of the execution pool ("worker") or inline, turning failures into InferenceErrors
 * that carry onnxruntime's own reason: a file that is not a valid model is INVALID_ARG,
 * a missing execution provider library UNAVAILABLE, bfloat16 tensors UNSUPPORTED.
 * `what` names the session's user in later errors, e.g. "model 'm' instance 'm_0'".
 */
export async function openSession(spec: SessionSpec, thread: SessionThread, what = `model '${spec.modelName}'`): Promise<OnnxSession> {
  const { runtime, modelFile, options, modelName, pool } = spec;
  try {
    const source = await runtime.sessionSource(modelFile, modelName);
    return thread === 'worker' ? await pool.open(runtime, source, options, what, spec.group ?? modelName) : await InlineSession.open(runtime, source, options);
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
