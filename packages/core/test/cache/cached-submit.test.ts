import { describe, expect, it } from 'vitest';
import type { Tensor } from '@tritium/core';
import { submitCached, type CacheableVersion } from '../../src/cache/cached-submit.js';
import type { ResponseCache } from '../../src/cache/response-cache.js';
import { encodeTensors } from '../../src/cache/tensor-codec.js';
import { InferenceError } from '../../src/errors.js';
import { InferenceRequest, type ValidatedRequest } from '../../src/scheduling/inference-request.js';
import { ModelOutputs } from '../../src/scheduling/model-outputs.js';
import type { ResponseSink } from '../../src/scheduling/response-channel.js';

const fp32 = (...values: number[]): Tensor => ({ datatype: 'FP32', shape: [values.length], data: new Float32Array(values) });
const outputs = new ModelOutputs({ name: 'm', output: [{ name: 'Y', data_type: 'TYPE_FP32', dims: [2] }] });

/** A cache whose lookups answer when the test says. */
class HeldCache implements ResponseCache {
  readonly lookups: Array<(entry: Uint8Array | undefined) => void> = [];
  readonly stored: string[] = [];
  get(): Promise<Uint8Array | undefined> {
    return new Promise((resolve) => this.lookups.push(resolve));
  }
  async set(key: string): Promise<void> {
    this.stored.push(key);
  }
  async close(): Promise<void> {}
}

/** A model version that records what the cache asks of it; enqueued requests stay queued. */
class FakeVersion implements CacheableVersion {
  readonly context = { name: 'm' };
  readonly version = 1;
  readonly statistics = { recordCacheMiss: () => {} };
  isUnloading = false;
  readonly enqueued: InferenceRequest[] = [];
  /** How each request ended: as a cache hit or not, and with what error. */
  readonly ended: Array<{ hit: boolean; error?: InferenceError }> = [];
  private readonly hits = new Set<InferenceRequest>();

  accept(request: ValidatedRequest, sink: ResponseSink): InferenceRequest {
    return new InferenceRequest('m', 1, request, sink, (r, error) => this.ended.push({ hit: this.hits.has(r), error }), outputs);
  }

  answering(sink: ResponseSink): ResponseSink {
    return sink;
  }

  enqueue(accepted: InferenceRequest): InferenceRequest {
    this.enqueued.push(accepted);
    return accepted;
  }

  answerFromCache(accepted: InferenceRequest, hit: Record<string, Tensor>): void {
    this.hits.add(accepted);
    accepted.response.send(hit, { final: true });
  }
}

function request(): ValidatedRequest {
  return { id: 'r', inputs: { X: fp32(1, 2) }, requestedOutputs: ['Y'], batchSize: 1, parameters: {}, priority: 0, timeoutMicroseconds: 0, signal: undefined, sequence: undefined, trace: undefined };
}

function caller() {
  const heard: string[] = [];
  const sink: ResponseSink = { response: (o) => heard.push(`response ${Object.keys(o)}`), end: () => heard.push('end'), error: (e) => heard.push(`error ${e.code}: ${e.message}`) };
  return { sink, heard };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('a request through the response cache', () => {
  it('is accepted before its lookup, and a hit answers it without running the model, as a cache hit', async () => {
    const cache = new HeldCache();
    const fake = new FakeVersion();
    const { sink, heard } = caller();
    const accepted = submitCached(fake, cache, request(), sink);
    expect(accepted).toBeInstanceOf(InferenceRequest);
    cache.lookups[0]!(encodeTensors({ Y: fp32(3, 4) }));
    await settle();
    expect(heard).toEqual(['response Y', 'end']);
    expect(fake.enqueued).toEqual([]);
    expect(fake.ended).toEqual([{ hit: true, error: undefined }]);
  });

  it('runs a miss, keeping a copy of its success before the caller hears the end', async () => {
    const cache = new HeldCache();
    const fake = new FakeVersion();
    const { sink, heard } = caller();
    submitCached(fake, cache, request(), sink);
    // An entry that is not one (another writer's bytes in a shared Redis) is a miss.
    cache.lookups[0]!(new Uint8Array([1, 2, 3]));
    await settle();
    expect(fake.enqueued).toHaveLength(1);
    fake.enqueued[0]!.response.send({ Y: fp32(3, 4) }, { final: true });
    expect(cache.stored).toHaveLength(1);
    expect(heard).toEqual(['response Y', 'end']);
  });

  it('can be cancelled during its lookup, and is then neither answered again nor run', async () => {
    const cache = new HeldCache();
    const fake = new FakeVersion();
    const { sink, heard } = caller();
    const accepted = submitCached(fake, cache, request(), sink);
    accepted.cancel(new InferenceError('CANCELLED', 'cancelled by the caller'));
    cache.lookups[0]!(encodeTensors({ Y: fp32(3, 4) }));
    await settle();
    expect(heard).toEqual(['error CANCELLED: cancelled by the caller']);
    expect(fake.enqueued).toEqual([]);
    expect(fake.ended).toHaveLength(1);
  });

  it('is refused, not run, when its version began unloading during a lookup that missed', async () => {
    const cache = new HeldCache();
    const fake = new FakeVersion();
    const { sink, heard } = caller();
    submitCached(fake, cache, request(), sink);
    fake.isUnloading = true;
    cache.lookups[0]!(undefined);
    await settle();
    expect(fake.enqueued).toEqual([]);
    expect(heard).toEqual(["error UNAVAILABLE: model 'm' version 1 was unloaded while the request looked in the response cache"]);
  });
});
