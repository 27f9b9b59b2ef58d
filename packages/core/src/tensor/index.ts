export {
  DATA_TYPES,
  dataTypeFromConfig,
  dataTypeToConfig,
  elementByteSize,
  isDataType,
  typedArrayConstructor,
} from './datatype.js';
export type {
  BytesElement,
  ConfigDataType,
  DataType,
  FixedSizeDataType,
  TensorData,
  TensorDataMap,
  TypedArrayConstructor,
  TypedTensorData,
} from './datatype.js';
export { elementCount, isValidShape, mapVariableDims, shapeMatches, shapeToString } from './shape.js';
export { toTensor } from './to-tensor.js';
export type { Tensor, TensorInput, TensorRole } from './tensor.js';
export { concatTensorData, createTensorData, sliceTensorData, tensorByteSize, tensorBytes, tensorFromBytes } from './data.js';
export { bytesElementToString, deserializeBytesTensor, serializeBytesTensor, serializedBytesSize } from './bytes.js';
export {
  bf16BitsToFloat32,
  float32ToBf16Bits,
  float32ToFp16Bits,
  fp16BitsToFloat32,
  fromBf16,
  fromFp16,
  toBf16,
  toFp16,
} from './half.js';
