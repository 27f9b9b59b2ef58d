import { tensorBytes, type InferenceServer, type InferResponse, type Tensor } from '@tritium/core';
import { classify } from './classification.js';
import type { WireParameters } from './request-parameters.js';
import { sharedMemoryRef } from './shared-memory/shared-memory-tensors.js';
import type { RequestRegions } from './shared-memory/request-regions.js';
import type { SharedMemoryRef } from './shared-memory/system-shared-memory.js';
import { asCount, describe, invalid } from './wire-values.js';

/** One requested output and what the client asked of it (either protocol). */
export interface OutputRequest {
  readonly name: string;
  /** Triton's classification extension: return the top `classification` classes instead of the tensor. */
  readonly classification?: number;
  /** Write the output into this registered region instead of the response. */
  readonly sharedMemory?: SharedMemoryRef;
}

/** One output as the response reports it. */
export interface DeliveredOutput {
  readonly name: string;
  /** For an output written to shared memory, its metadata only matters (the data is in the region). */
  readonly tensor: Tensor;
  /** Set when the output went to shared memory: where, and how many bytes it took. */
  readonly sharedMemory?: SharedMemoryRef;
}

/**
 * Reads an output's parameters (`classification`, `shared_memory_*`); other keys (such as
 * `binary_data`) are the protocol's. A region named is held for the request from here.
 */
export function outputRequest(name: string, parameters: WireParameters | undefined, regions: RequestRegions): OutputRequest {
  const classification = parameters?.classification;
  const count = asCount(classification);
  if (classification !== undefined && !count) {
    throw invalid(`output '${name}': parameter 'classification' must be a positive integer, got ${describe(classification)}`);
  }
  const sharedMemory = sharedMemoryRef(name, 'output', parameters);
  if (count !== undefined && sharedMemory) throw invalid(`output '${name}': classification cannot be written to shared memory`);
  if (sharedMemory) regions.hold(sharedMemory);
  return { name, classification: count, sharedMemory };
}

/** Whether any requested output asks for more than its tensor (classification, or shared memory). */
export function needsDelivery(requested: readonly OutputRequest[] | undefined): boolean {
  return requested?.some((r) => r.classification !== undefined || r.sharedMemory !== undefined) === true;
}

/**
 * The response's outputs as they are, when the client asked nothing of them (no
 * classification, no shared memory): the common case, answered without waiting.
 * Undefined otherwise, for deliverOutputs.
 */
export function plainOutputs(response: InferResponse, requested: readonly OutputRequest[] | undefined): DeliveredOutput[] | undefined {
  if (needsDelivery(requested)) return undefined;
  return Object.entries(response.outputs).map(([name, tensor]) => ({ name, tensor }));
}

/**
 * Turns a response's outputs into what the client asked for, in the order it asked
 * (the model's order when it named none): classification applied, shared-memory
 * outputs written into the regions the request holds.
 */
export async function deliverOutputs(
  server: InferenceServer,
  response: InferResponse,
  requested: readonly OutputRequest[] | undefined,
  regions: RequestRegions,
): Promise<DeliveredOutput[]> {
  const plain = plainOutputs(response, requested);
  if (plain) return plain;
  const { modelName, modelVersion } = response;
  const delivered: DeliveredOutput[] = [];
  for (const request of requested ?? []) {
    const tensor = response.outputs[request.name];
    if (!tensor) continue;
    if (request.classification !== undefined) {
      const { maxBatchSize } = server.modelFacts(modelName, modelVersion);
      const labels = await server.outputLabels(modelName, request.name, modelVersion);
      delivered.push({ name: request.name, tensor: classify(request.name, tensor, request.classification, maxBatchSize > 0, labels) });
    } else if (request.sharedMemory) {
      const bytes = tensorBytes(tensor);
      regions.write(request.sharedMemory, bytes);
      delivered.push({ name: request.name, tensor, sharedMemory: { ...request.sharedMemory, byteSize: bytes.length } });
    } else {
      delivered.push({ name: request.name, tensor });
    }
  }
  return delivered;
}
