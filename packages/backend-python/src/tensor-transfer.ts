import { InferenceError, isDataType, tensorBytes, tensorFromBytes, type Tensor } from '@tritium/core/backend';
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

/**
 * Writes groups of named tensors into the arena under one lease (one frame's worth)
 * and returns their references, group by group. The only copy on the way to the stub.
 */
export function writeTensors(arena: Arena, groups: ReadonlyArray<Readonly<Record<string, Tensor>>>): { lease: number | null; refs: TensorRef[][] } {
  const pieces = groups.map((tensors) => Object.entries(tensors).map(([name, tensor]) => ({ name, tensor, bytes: tensorBytes(tensor) })));
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
  if (!isDataType(ref.datatype)) throw new InferenceError('INTERNAL', `${where}: output '${ref.name}' has datatype '${ref.datatype}', which Triton does not have`);
  const bytes = ref.nbytes === 0 ? new Uint8Array(0) : peers.view(ref.region, ref.offset, ref.nbytes);
  try {
    return tensorFromBytes(ref.name, ref.datatype, ref.shape, bytes);
  } catch (error) {
    // The stub's output is at fault, not the caller's request.
    throw new InferenceError('INTERNAL', `${where}: output ${InferenceError.from(error).message}`);
  }
}
