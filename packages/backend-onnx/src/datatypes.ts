import { InferenceError } from '@tritium/core/backend';
import type { DataType } from '@tritium/core/backend';

/** The element type names the onnxruntime JavaScript API uses (`Tensor.type`, session metadata). */
export type OrtElementType =
  | 'bool'
  | 'uint8'
  | 'uint16'
  | 'uint32'
  | 'uint64'
  | 'int8'
  | 'int16'
  | 'int32'
  | 'int64'
  | 'float16'
  | 'float32'
  | 'float64'
  | 'string';

/**
 * Triton's ONNX type map (onnxruntime_backend's ModelConfigDataTypeToOnnxDataType),
 * in wire names. BF16 is absent: neither onnxruntime-node nor onnxruntime-web can
 * feed or fetch bfloat16 tensors from JavaScript (they fail with "Unsupported data
 * type: 16"), and Triton's ONNX backend does not map it either.
 */
const TO_ORT: Readonly<Record<Exclude<DataType, 'BF16'>, OrtElementType>> = {
  BOOL: 'bool',
  UINT8: 'uint8',
  UINT16: 'uint16',
  UINT32: 'uint32',
  UINT64: 'uint64',
  INT8: 'int8',
  INT16: 'int16',
  INT32: 'int32',
  INT64: 'int64',
  FP16: 'float16',
  FP32: 'float32',
  FP64: 'float64',
  BYTES: 'string',
};

const FROM_ORT: Readonly<Record<string, DataType>> = Object.fromEntries(
  Object.entries(TO_ORT).map(([wire, ort]) => [ort, wire as DataType]),
);

/** The Triton datatype of an onnxruntime element type; undefined for types Triton does not map. */
export function dataTypeOfOrt(type: string): DataType | undefined {
  return FROM_ORT[type];
}

/** The onnxruntime element type of a Triton datatype; an unmapped one (BF16) is an UNSUPPORTED error naming the tensor. */
export function requireOrtType(datatype: DataType, what: string): OrtElementType {
  const type = (TO_ORT as Record<string, OrtElementType | undefined>)[datatype];
  if (!type) {
    throw new InferenceError(
      'UNSUPPORTED',
      `${what}: datatype ${datatype} has no onnxruntime equivalent usable from JavaScript (onnxruntime-node/web cannot pass bfloat16 tensors)`,
    );
  }
  return type;
}
