import { tensorFromBytes, type DataType, type Tensor } from '@tritium/core';
import type { WireParameters } from '../request-parameters.js';
import { asCount, describe, invalid } from '../wire-values.js';
import type { SharedMemoryRef, SystemSharedMemory } from './system-shared-memory.js';

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

/** An input whose bytes lie in a registered region, or undefined when its parameters name none. */
export function sharedMemoryInput(
  memory: SystemSharedMemory,
  name: string,
  datatype: DataType,
  shape: number[],
  parameters: WireParameters | undefined,
): Tensor | undefined {
  const ref = sharedMemoryRef(name, 'input', parameters);
  return ref && tensorFromBytes(name, datatype, shape, memory.read(ref), 'view');
}

function count(name: string, role: string, parameter: string, value: unknown): number {
  const number = asCount(value);
  if (number === undefined) throw invalid(`${role} '${name}': parameter '${parameter}' must be a non-negative integer, got ${describe(value)}`);
  return number;
}
