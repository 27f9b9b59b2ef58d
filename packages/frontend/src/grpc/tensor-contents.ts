import { typedArrayConstructor, type DataType, type TensorInput } from '@tritium/core';
import { invalid } from '../wire-values.js';

/** InferTensorContents as the loader decodes it: every repeated field present; 64-bit values as strings. */
export type TensorContents = Readonly<Record<ContentsField, readonly unknown[]>>;

/** Which datatypes each typed field may carry, as Triton reads them; FP16 and BF16 come only as raw bytes. */
const CARRIES = {
  bool_contents: ['BOOL'],
  int_contents: ['INT8', 'INT16', 'INT32'],
  int64_contents: ['INT64'],
  uint_contents: ['UINT8', 'UINT16', 'UINT32'],
  uint64_contents: ['UINT64'],
  fp32_contents: ['FP32'],
  fp64_contents: ['FP64'],
  bytes_contents: ['BYTES'],
} as const satisfies Record<string, readonly DataType[]>;

type ContentsField = keyof typeof CARRIES;
const FIELDS = Object.keys(CARRIES) as ContentsField[];

/**
 * An input given as typed values (InferTensorContents) rather than raw bytes. Narrower
 * types come in wider fields (INT8 in int_contents) and keep their low bytes, as in
 * Triton; the element count is checked against the shape by the server, as for raw data.
 */
export function tensorFromContents(name: string, datatype: DataType, shape: number[], contents: TensorContents): TensorInput {
  const filled = FIELDS.filter((field) => contents[field].length > 0);
  if (filled.length > 1) {
    throw invalid(`input '${name}': contents hold data in more than one field (${filled.join(', ')})`);
  }
  const field = filled[0];
  if (field && !(CARRIES[field] as readonly DataType[]).includes(datatype)) {
    const expected = FIELDS.find((f) => (CARRIES[f] as readonly DataType[]).includes(datatype));
    const where = expected ? `its contents belong in ${expected}` : `${datatype} data must come in raw_input_contents`;
    throw invalid(`input '${name}': ${datatype} data cannot come in ${field}; ${where}`);
  }
  const values = field ? contents[field] : [];
  if (datatype === 'BYTES') return { datatype, shape, data: values as Uint8Array[] };
  const TypedArray = typedArrayConstructor(datatype)!;
  const data = new TypedArray(values.length);
  const wide = datatype === 'INT64' || datatype === 'UINT64';
  for (let i = 0; i < values.length; i++) (data as unknown as unknown[])[i] = wide ? BigInt(values[i] as string) : Number(values[i]);
  return { datatype, shape, data };
}
