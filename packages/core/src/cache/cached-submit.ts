import { performance } from 'node:perf_hooks';
import { InferenceError } from '../errors.js';
import type { InferenceRequest, ValidatedRequest } from '../scheduling/inference-request.js';
import type { ResponseSink } from '../scheduling/response-channel.js';
import type { Tensor } from '../tensor/tensor.js';
import { cacheKey } from './cache-key.js';
import type { ResponseCache } from './response-cache.js';
import { decodeTensors, encodeTensors } from './tensor-codec.js';

/** What the response cache needs of the model version whose submit it wraps (ServedModelVersion). */
export interface CacheableVersion {
  readonly context: { readonly name: string };
  readonly version: number;
  readonly statistics: { recordCacheMiss(ms: number): void };
  /** Set once the version began unloading: a request still looking in the cache is not run then. */
  readonly isUnloading: boolean;
  /** Takes the request in (tracked until it ends, so unloading drains it), its responses to `sink`. */
  accept(request: ValidatedRequest, sink: ResponseSink): InferenceRequest;
  /** The sink a request that runs answers through (preserve_ordering takes its place in line here). */
  answering(sink: ResponseSink): ResponseSink;
  /** Hands an accepted request to the scheduler. */
  enqueue(accepted: InferenceRequest): InferenceRequest;
  /** Ends an accepted request with outputs from the cache; it counts as a cache hit from `lookupStart`. */
  answerFromCache(accepted: InferenceRequest, outputs: Record<string, Tensor>, lookupStart: number): void;
}

/**
 * `version.submit` through the response cache: the request is accepted at once (so it can
 * be cancelled, and unloading waits for it), then looked up. A hit answers it through
 * the caller's sink without running the model; a miss runs it with a sink that keeps a
 * copy of a successful response (the copy is made before the caller has it; the caller
 * does not wait for the insertion itself).
 */
export function submitCached(version: CacheableVersion, cache: ResponseCache, request: ValidatedRequest, sink: ResponseSink): InferenceRequest {
  const start = performance.now();
  const key = cacheKey(version.context.name, version.version, request.inputs, request.requestedOutputs);
  const route = new CacheRoute(sink);
  const accepted = version.accept(request, route);
  const looked = (hit: Uint8Array | undefined) => {
    // Cancelled, timed out or failed by an unload during the lookup: it has its answer.
    if (accepted.response.isEnded) return;
    const outputs = hit && usableEntry(hit, request.requestedOutputs);
    if (outputs) {
      version.answerFromCache(accepted, outputs, start);
      return;
    }
    // The version may have begun unloading during the lookup: it must not take the request then.
    if (version.isUnloading) {
      accepted.cancel(
        new InferenceError('UNAVAILABLE', `model '${version.context.name}' version ${version.version} was unloaded while the request looked in the response cache`),
      );
      return;
    }
    const lookup = performance.now() - start;
    route.miss(version.answering(sink), (outputs) => {
      const inserting = performance.now();
      void cache.set(key, encodeTensors(outputs)).then(
        () => version.statistics.recordCacheMiss(lookup + performance.now() - inserting),
        () => {},
      );
    });
    version.enqueue(accepted);
  };
  // A cache never fails a request (ResponseCache's promise); one that does anyway is a miss.
  cache.get(key).then(looked, () => looked(undefined)).catch((error: unknown) => accepted.response.fail(error));
  return accepted;
}

/**
 * An entry's outputs, or undefined when it is not a usable answer: one that does not
 * decode, or does not hold exactly the requested outputs (written into a shared Redis by
 * something else), is a miss, not a failure.
 */
function usableEntry(bytes: Uint8Array, requestedOutputs: readonly string[]): Record<string, Tensor> | undefined {
  let outputs: Record<string, Tensor>;
  try {
    outputs = decodeTensors(bytes);
  } catch {
    return undefined;
  }
  const names = Object.keys(outputs);
  return names.length === requestedOutputs.length && requestedOutputs.every((name) => name in outputs) ? outputs : undefined;
}

/**
 * The sink of a request that looks in the cache. Until the lookup answers, only an error
 * (a cancellation) can come, and it goes to the caller; a hit's response goes to the
 * caller too. After a miss, responses go the way a running request's do, and a
 * successful one is handed to `insert` before the caller hears the end.
 */
class CacheRoute implements ResponseSink {
  private insert: ((outputs: Record<string, Tensor>) => void) | undefined;
  private outputs: Record<string, Tensor> | undefined;

  constructor(private target: ResponseSink) {}

  miss(running: ResponseSink, insert: (outputs: Record<string, Tensor>) => void): void {
    this.target = running;
    this.insert = insert;
  }

  response(outputs: Record<string, Tensor>, final: boolean): void {
    if (this.insert) this.outputs = outputs;
    this.target.response(outputs, final);
  }

  end(): void {
    if (this.insert && this.outputs) this.insert(this.outputs);
    this.target.end();
  }

  error(error: InferenceError): void {
    this.target.error(error);
  }
}
