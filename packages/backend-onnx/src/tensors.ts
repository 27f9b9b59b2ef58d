import { InferenceError, toFp16 } from '@tritium/core/backend';
import type { DataType, Tensor, TensorData } from '@tritium/core/backend';
import { dataTypeOfOrt, requireOrtType } from './datatypes.js';
import type { TensorPayload } from './onnx-session.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A Tritium tensor as a session takes it: onnxruntime's element type, data and dims.
 * Typed data is passed as it is: it already has the element type onnxruntime expects
 * (bool: Uint8Array, float16: Uint16Array bits, int64: BigInt64Array, ...). BYTES
 * become JavaScript strings, as onnxruntime's JavaScript API has no other string
 * form: `strings`, which the caller decoded per request (so a bad string fails its own
 * request alone). `what` names the tensor in errors, e.g. "model 'm' input 'X'".
 */
export function toPayload(tensor: Tensor, what: string, strings?: string[]): TensorPayload {
  const type = requireOrtType(tensor.datatype, what);
  return { type, data: type === 'string' ? strings! : (tensor.data as ArrayBufferView), dims: tensor.shape };
}

/** Reads an onnxruntime output back as a Tritium tensor of the expected datatype. */
export function fromOrtTensor(value: TensorPayload, expected: DataType | undefined, what: string): Tensor {
  const datatype = dataTypeOfOrt(value.type);
  if (!datatype) throw new InferenceError('INTERNAL', `${what}: onnxruntime returned element type '${value.type}', which has no Triton datatype`);
  if (expected && expected !== datatype) {
    throw new InferenceError('INTERNAL', `${what}: the model produced ${datatype} where the configuration says ${expected}`);
  }
  return { datatype, shape: [...value.dims], data: outputData(datatype, value.data) };
}

function outputData(datatype: DataType, data: unknown): TensorData {
  // Runtimes with Float16Array return float16 as numbers; Tritium keeps bits.
  if (datatype === 'FP16' && !(data instanceof Uint16Array)) return toFp16(data as ArrayLike<number>);
  return data as TensorData;
}

/**
 * BYTES elements as the JavaScript strings onnxruntime's string tensors hold. Only
 * UTF-8 without NUL survives that (the strings end at the first NUL), so anything
 * else is INVALID_ARG rather than reaching the model changed.
 */
export function decodeStrings(elements: TensorData<'BYTES'>, what: string): string[] {
  const strings = new Array<string>(elements.length);
  for (let i = 0; i < elements.length; i++) {
    const element = elements[i]!;
    let text: string;
    if (typeof element === 'string') {
      text = element;
    } else {
      try {
        text = utf8.decode(element);
      } catch {
        throw new InferenceError(
          'INVALID_ARG',
          `${what}: BYTES element ${i} is not UTF-8; onnxruntime's JavaScript API passes string tensors as JavaScript strings, so only UTF-8 text can reach an ONNX model`,
        );
      }
    }
    if (text.includes('\0')) {
      throw new InferenceError('INVALID_ARG', `${what}: BYTES element ${i} contains a NUL character, which onnxruntime's string tensors cannot hold (they end at the first NUL)`);
    }
    strings[i] = text;
  }
  return strings;
}
