import { describe, expect, it } from 'vitest';
import type { Backend, Tensor } from '@tritium/core';
import { gatherBatchInput, scatterBatchOutputs, type BackendRequest } from '@tritium/core/backend';
import { BatchBuffers, sizeFor } from '../../src/backend/batch-buffers.js';
import { useServerFixture } from '../helpers/server-fixture.js';

const output = (buffer: ArrayBuffer): Tensor => ({ datatype: 'FP32', shape: [1], data: new Float32Array(buffer, 0, 1) });

describe('BatchBuffers', () => {
  it('lends buffers in power-of-two sizes of at least 64 bytes', () => {
    expect([1, 64, 65, 128, 129, 4096, 5000].map(sizeFor)).toEqual([64, 64, 128, 128, 256, 4096, 8192]);
    const buffers = new BatchBuffers();
    expect(buffers.take(100).byteLength).toBe(128);
  });

  it('never lends one buffer twice in an execution, and lends it again only after release', () => {
    const buffers = new BatchBuffers();
    const a = buffers.take(100);
    const b = buffers.take(100);
    expect(b).not.toBe(a);
    buffers.release([]);
    const again = [buffers.take(120), buffers.take(128)];
    expect(again).toContain(a);
    expect(again).toContain(b);
    // A third buffer of the size is new: both are lent.
    const c = buffers.take(100);
    expect(c).not.toBe(a);
    expect(c).not.toBe(b);
  });

  it('reuses a buffer only for its own size', () => {
    const buffers = new BatchBuffers();
    const small = buffers.take(100);
    buffers.release([]);
    expect(buffers.take(1000)).not.toBe(small);
    expect(buffers.take(100)).toBe(small);
  });

  it('keeps what one execution used: buffers the next execution leaves untaken are dropped', () => {
    const buffers = new BatchBuffers();
    const a = buffers.take(100);
    buffers.release([]);
    buffers.take(1000);
    buffers.release([]);
    expect(buffers.take(100)).not.toBe(a);
  });

  it('gives up a buffer that an output shares, that was transferred, or that is too large to keep', () => {
    const buffers = new BatchBuffers();
    const shared = buffers.take(100);
    const transferred = buffers.take(100);
    const huge = buffers.take(17 * 2 ** 20);
    structuredClone(transferred, { transfer: [transferred] });
    buffers.release([new Error('failed'), { OUT: output(shared) }]);
    const next = [buffers.take(100), buffers.take(100), buffers.take(17 * 2 ** 20)];
    expect(next).not.toContain(shared);
    expect(next).not.toContain(transferred);
    expect(next).not.toContain(huge);
  });
});

describe('batch buffers through the instance runner', () => {
  const fx = useServerFixture();
  const config = (name: string) => `backend: "${name}"
max_batch_size: 8
input { name: "INPUT0" data_type: TYPE_FP32 dims: [ 2 ] }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 2 ] }
instance_group { count: 1 kind: KIND_CPU }
dynamic_batching { max_queue_delay_microseconds: 100000 preferred_batch_size: [ 4 ] }
`;
  const infer = (server: Awaited<ReturnType<typeof fx.start>>, value: number) =>
    server.infer('m', { inputs: { INPUT0: { datatype: 'FP32', shape: [1, 2], data: new Float32Array([value, value]) } } });
  const values = (tensor: Tensor | undefined) => Array.from(tensor!.data as Float32Array);

  /** A backend that gathers INPUT0 and answers with `answer(gathered)`, recording each gathered buffer. */
  function gathering(name: string, answer: (gathered: Tensor) => Tensor): Backend & { gathered: ArrayBufferLike[] } {
    const gathered: ArrayBufferLike[] = [];
    return {
      name,
      gathered,
      async createModel() {
        return {
          async createInstance() {
            return {
              async execute(requests: readonly BackendRequest[]) {
                const input = gatherBatchInput(requests, 'INPUT0');
                gathered.push((input.data as Float32Array).buffer);
                await new Promise((resolve) => setImmediate(resolve));
                return scatterBatchOutputs(requests, { OUTPUT0: answer(input) });
              },
            };
          },
        };
      },
    };
  }

  it('gathers each batch into the memory the previous batch gave back', async () => {
    const backend = gathering('plus', (x) => ({ ...x, data: (x.data as Float32Array).map((v) => v + 1) }));
    const server = await fx.start({ m: { config: config('plus') } }, { backends: [backend] });
    for (let round = 0; round < 3; round++) {
      const responses = await Promise.all([1, 2, 3, 4].map((v) => infer(server, v + 10 * round)));
      expect(responses.map((r) => values(r.outputs.OUTPUT0))).toEqual([1, 2, 3, 4].map((v) => [v + 10 * round + 1, v + 10 * round + 1]));
    }
    expect(backend.gathered).toHaveLength(3);
    expect(backend.gathered[1]).toBe(backend.gathered[0]);
    expect(backend.gathered[2]).toBe(backend.gathered[0]);
  });

  it('never reuses memory that callers were answered with (an output that is the gathered input)', async () => {
    const backend = gathering('identity', (x) => x);
    const server = await fx.start({ m: { config: config('identity') } }, { backends: [backend] });
    const first = await Promise.all([1, 2, 3, 4].map((v) => infer(server, v)));
    const second = await Promise.all([5, 6, 7, 8].map((v) => infer(server, v)));
    expect(backend.gathered[1]).not.toBe(backend.gathered[0]);
    expect(first.map((r) => values(r.outputs.OUTPUT0))).toEqual([[1, 1], [2, 2], [3, 3], [4, 4]]);
    expect(second.map((r) => values(r.outputs.OUTPUT0))).toEqual([[5, 5], [6, 6], [7, 7], [8, 8]]);
  });
});
