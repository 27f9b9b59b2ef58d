import {
  deserializeBytesTensor,
  elementCount,
  InferenceError,
  isDataType,
  serializeBytesTensor,
  typedArrayConstructor,
  type DataType,
  type Tensor,
  type TypedTensorData,
} from '@tritium/core';
import type { Arena } from './arena.js';
import type { PeerRegions } from './peer-regions.js';

/** A tensor as a frame names it: its bytes are in a shared-memory region (PROTOCOL.md). */
export interface TensorRef {
  name: string;
  datatype: string;
  shape: number[];
  region: string;
  offset: number;
  nbytes: number;
}

/** A tensor's bytes as they lie in shared memory: BYTES in Triton's serialized form, others as they are. */
function rawBytes(tensor: Tensor): Uint8Array {
  if (tensor.datatype === 'BYTES') return serializeBytesTensor(tensor.data as Tensor<'BYTES'>['data']);
  const data = tensor.data as TypedTensorData;
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/**
 * Writes groups of named tensors into the arena under one lease (one frame's worth)
 * and returns their references, group by group. The only copy on the way to the stub.
 */
export function writeTensors(arena: Arena, groups: ReadonlyArray<Readonly<Record<string, Tensor>>>): { lease: number | null; refs: TensorRef[][] } {
  const pieces = groups.map((tensors) => Object.entries(tensors).map(([name, tensor]) => ({ name, tensor, bytes: rawBytes(tensor) })));
  const { lease, region, offsets } = arena.allocateMany(pieces.flat().map((piece) => piece.bytes.byteLength));
  let next = 0;
  const refs = pieces.map((group) =>
    group.map(({ name, tensor, bytes }) => {
      const offset = offsets[next++]!;
      if (bytes.byteLength > 0) region!.bytes.set(bytes, offset);
      return { name, datatype: tensor.datatype, shape: tensor.shape, region: bytes.byteLength > 0 ? region!.name : '', offset, nbytes: bytes.byteLength };
    }),
  );
  return { lease, refs };
}

/**
 * Copies tensors out of the stub's region into memory of their own (the region is
 * reused once the lease is returned), checking that each reference is well formed.
 */
export function readTensors(peers: PeerRegions, refs: readonly TensorRef[], where: string): Record<string, Tensor> {
  const tensors: Record<string, Tensor> = {};
  for (const ref of refs) tensors[ref.name] = readTensor(peers, ref, where);
  return tensors;
}

function readTensor(peers: PeerRegions, ref: TensorRef, where: string): Tensor {
  const fail = (detail: string) => new InferenceError('INTERNAL', `${where}: output '${ref.name}' ${detail}`);
  if (!isDataType(ref.datatype)) throw fail(`has datatype '${ref.datatype}', which Triton does not have`);
  const datatype: DataType = ref.datatype;
  const shape = ref.shape;
  const count = elementCount(shape);
  const bytes = ref.nbytes === 0 ? new Uint8Array(0) : peers.view(ref.region, ref.offset, ref.nbytes);
  if (datatype === 'BYTES') {
    // The elements are views: copy the whole buffer once so they outlive the region.
    return { datatype, shape, data: deserializeBytesTensor(bytes.slice(), count, ref.name) };
  }
  const TypedArray = typedArrayConstructor(datatype)!;
  if (bytes.byteLength !== count * TypedArray.BYTES_PER_ELEMENT) {
    throw fail(`holds ${bytes.byteLength} bytes, but ${datatype} of shape [${shape.join(', ')}] needs ${count * TypedArray.BYTES_PER_ELEMENT}`);
  }
  const data = new TypedArray(count);
  new Uint8Array(data.buffer).set(bytes);
  return { datatype, shape, data } as Tensor;
}
