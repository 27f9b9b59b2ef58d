import type { DataType } from '../tensor/datatype.js';
import { tensorBytes, tensorFromBytes } from '../tensor/data.js';
import type { Tensor } from '../tensor/tensor.js';

interface Entry {
  name: string;
  datatype: DataType;
  shape: number[];
  bytes: number;
}

/**
 * Named tensors as one buffer, for a cache to keep (a copy: the caller may change what it
 * was given) or to send to Redis: a 4-byte header length, a JSON header, then the bytes.
 */
export function encodeTensors(tensors: Readonly<Record<string, Tensor>>): Buffer {
  const parts = Object.entries(tensors).map(([name, tensor]) => ({ name, tensor, bytes: tensorBytes(tensor) }));
  const header = Buffer.from(JSON.stringify(parts.map(({ name, tensor, bytes }): Entry => ({ name, datatype: tensor.datatype, shape: tensor.shape, bytes: bytes.byteLength }))));
  const out = Buffer.allocUnsafe(4 + header.length + parts.reduce((total, part) => total + part.bytes.byteLength, 0));
  out.writeUInt32LE(header.length, 0);
  header.copy(out, 4);
  let offset = 4 + header.length;
  for (const { bytes } of parts) {
    out.set(bytes, offset);
    offset += bytes.byteLength;
  }
  return out;
}

/** The tensors of encodeTensors(), each in memory of its own. */
export function decodeTensors(buffer: Uint8Array): Record<string, Tensor> {
  const view = Buffer.from(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  const headerLength = view.readUInt32LE(0);
  const entries = JSON.parse(view.toString('utf8', 4, 4 + headerLength)) as Entry[];
  let offset = 4 + headerLength;
  const tensors: Record<string, Tensor> = {};
  for (const { name, datatype, shape, bytes } of entries) {
    tensors[name] = tensorFromBytes(name, datatype, shape, view.subarray(offset, offset + bytes));
    offset += bytes;
  }
  return tensors;
}
