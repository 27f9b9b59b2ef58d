import { InferenceError } from '@tritium/core/backend';
import type { DataType } from '@tritium/core/backend';
import { dataTypeOfOrt } from './datatypes.js';
import type { SessionMetadata } from './onnx-session.js';

/** One input or output as the ONNX model declares it. */
export interface TensorSignature {
  readonly name: string;
  readonly datatype: DataType;
  /** The model's dims, -1 for every symbolic or unknown dimension. */
  readonly dims: readonly number[];
}

export interface ModelSignature {
  readonly inputs: readonly TensorSignature[];
  readonly outputs: readonly TensorSignature[];
}

/** Reads a session's inputs and outputs, refusing what Triton cannot serve (non-tensors, unmapped types). */
export function signatureOf(session: SessionMetadata, modelName: string): ModelSignature {
  return {
    inputs: session.inputMetadata.map((m) => tensorSignature(m, 'input', modelName)),
    outputs: session.outputMetadata.map((m) => tensorSignature(m, 'output', modelName)),
  };
}

type ValueMetadata = SessionMetadata['inputMetadata'][number];

function tensorSignature(meta: ValueMetadata, role: 'input' | 'output', modelName: string): TensorSignature {
  if (!meta.isTensor) {
    throw new InferenceError(
      'UNSUPPORTED',
      `model '${modelName}': ${role} '${meta.name}' is not a tensor (a sequence or map), which the ONNX backend cannot serve`,
    );
  }
  const datatype = dataTypeOfOrt(meta.type);
  if (!datatype) {
    throw new InferenceError('UNSUPPORTED', `model '${modelName}': ${role} '${meta.name}' has ONNX element type '${meta.type}', which has no Triton datatype`);
  }
  return { name: meta.name, datatype, dims: meta.shape.map(normalizeDim) };
}

/**
 * Symbolic dims come as their name (or '' when unnamed) from onnxruntime-node, and an
 * unnamed one as 2^32-1 from onnxruntime-web; both are Triton's -1.
 */
function normalizeDim(dim: number | string): number {
  if (typeof dim === 'string') return -1;
  return dim < 0 || dim >= 2 ** 31 ? -1 : dim;
}
