import { elementByteSize, elementCount, shapeToString, tensorFromBytes, type DataType, type Tensor } from '@tritium/core';
import type { WireParameters } from '../request-parameters.js';
import { asCount, describe, invalid } from '../wire-values.js';
import type { RequestRegions } from './request-regions.js';
import type { SharedMemoryRef } from './system-shared-memory.js';

/**
 * A tensor's `shared_memory_region` / `shared_memory_offset` / `shared_memory_byte_size`
 * parameters, or undefined when it names no region.
 */
export function sharedMemoryRef(name: string, role: 'input' | 'output', parameters: WireParameters | undefined): SharedMemoryRef | undefined {
  const region = parameters?.shared_memory_region;
  if (region === undefined) return undefined;
  if (typeof region !== 'string' || region === '') {
    throw invalid(`${role} '${name}': parameter 'shared_memory_region' must be a region name`);
  }
  const size = parameters?.shared_memory_byte_size;
  if (size === undefined) throw invalid(`${role} '${name}': 'shared_memory_byte_size' is required with 'shared_memory_region'`);
  return {
    region,
    offset: count(name, role, 'shared_memory_offset', parameters?.shared_memory_offset ?? 0),
    byteSize: count(name, role, 'shared_memory_byte_size', size),
  };
}

/**
 * An input whose bytes lie in a registered region, or undefined when its parameters name
 * none. Its byte size is checked against its datatype and shape before a byte is read.
 */
export function sharedMemoryInput(
  regions: RequestRegions,
  name: string,
  datatype: DataType,
  shape: number[],
  parameters: WireParameters | undefined,
): Tensor | undefined {
  const ref = sharedMemoryRef(name, 'input', parameters);
  if (!ref) return undefined;
  checkInputSize(name, datatype, shape, ref.byteSize, regions.largestBytesInput);
  return tensorFromBytes(name, datatype, shape, regions.read(ref), 'view');
}

/**
 * A fixed-size datatype takes exactly its shape's bytes (as Triton requires). A BYTES
 * element takes at least its 4-byte length, and the whole input at most `largest`.
 */
function checkInputSize(name: string, datatype: DataType, shape: number[], byteSize: number, largest: number): void {
  const elements = elementCount(shape);
  const size = elementByteSize(datatype);
  const tensor = `${datatype} of shape ${shapeToString(shape)}`;
  if (size !== undefined) {
    if (byteSize !== elements * size) throw invalid(`input '${name}': shared_memory_byte_size ${byteSize} does not match ${tensor}, which needs ${elements * size} bytes`);
  } else if (byteSize < elements * 4) {
    throw invalid(`input '${name}': shared_memory_byte_size ${byteSize} is too small for ${tensor}, whose elements take at least 4 bytes each`);
  } else if (byteSize > largest) {
    throw invalid(`input '${name}': shared_memory_byte_size ${byteSize} is more than the ${largest} bytes a BYTES input may take from shared memory (the frontend's largest request)`);
  }
}

function count(name: string, role: string, parameter: string, value: unknown): number {
  const number = asCount(value);
  if (number === undefined) throw invalid(`${role} '${name}': parameter '${parameter}' must be a non-negative integer, got ${describe(value)}`);
  return number;
}
