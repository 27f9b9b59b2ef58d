import type { Tensor } from '../tensor/tensor.js';

const decoder = new TextDecoder();

/**
 * One TENSORS-level trace entry as Triton writes it: the tensor's values comma-joined in a
 * string (floats with six significant digits, as a C++ stream prints them; BOOL as 0/1;
 * each BYTES element in escaped quotes; FP16 and BF16 left empty, as Triton leaves them),
 * its shape comma-joined, its datatype.
 */
export function tensorEntry(id: number, activity: 'TENSOR_QUEUE_INPUT' | 'TENSOR_BACKEND_OUTPUT', name: string, tensor: Tensor): string {
  const tensorJson = `{"name":${JSON.stringify(name)},"data":${JSON.stringify(values(tensor))},"shape":"${tensor.shape.join(',')}","dtype":"${tensor.datatype}"}`;
  return `{"id":${id},"activity":"${activity}","tensor":${tensorJson}}`;
}

function values(tensor: Tensor): string {
  switch (tensor.datatype) {
    case 'FP16':
    case 'BF16':
      return '';
    case 'FP32':
    case 'FP64':
      return Array.from(tensor.data as Float32Array | Float64Array, (value) => String(Number(value.toPrecision(6)))).join(',');
    case 'BYTES':
      return (tensor.data as (string | Uint8Array)[]).map((element) => `"${typeof element === 'string' ? element : decoder.decode(element)}"`).join(',');
    default:
      return Array.from(tensor.data as ArrayLike<number | bigint>, String).join(',');
  }
}
