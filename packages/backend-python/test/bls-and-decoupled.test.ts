import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { InferResponse, Tensor } from '@tritium/core';
import { MODELS, pythonMissing, usePythonServer } from './helpers.js';

const sixteen = (f: (i: number) => number): Tensor => ({ datatype: 'FP32', shape: [16], data: Float32Array.from({ length: 16 }, (_, i) => f(i)) });
const int32 = (...values: number[]): Tensor => ({ datatype: 'INT32', shape: [values.length], data: new Int32Array(values) });
const values = (tensor: Tensor | undefined) => Array.from(tensor!.data as ArrayLike<number>);

describe.skipIf(pythonMissing)('BLS: Python models calling other models', () => {
  const python = usePythonServer();

  for (const model of ['bls_sync', 'bls_async']) {
    it(`${model} calls an ONNX model and returns its outputs`, async () => {
      const server = await python.start([model, 'add_sub_onnx']);
      const response = await server.infer(model, { inputs: { INPUT0: sixteen((i) => i), INPUT1: sixteen(() => 1) } });
      expect(values(response.outputs.OUTPUT0)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
      expect(values(response.outputs.OUTPUT1)).toEqual(Array.from({ length: 16 }, (_, i) => i - 1));
    });
  }

  it('reports the called model’s error to the calling model, which fails its request with it', async () => {
    const server = await python.start(['bls_sync', 'add_sub_onnx']);
    const failure = await server
      .infer('bls_sync', { inputs: { INPUT0: sixteen(() => 0), INPUT1: sixteen(() => 0) }, parameters: { model_name: 'no_such_model' } })
      .catch((error: Error) => error);
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toMatch(/no_such_model/);
    expect(await server.isModelReady('bls_sync')).toBe(true);
  });

  it('carries a sequence (correlation id, START/END flags) through a BLS call into a stateful model', async () => {
    const server = await python.start(['bls_sequence', 'sequence_echo']);
    const big = (2n ** 60n + 7n).toString();
    const step = async (start: boolean, end: boolean) => {
      const response = await server.infer('bls_sequence', { inputs: { INPUT0: { datatype: 'FP32', shape: [1], data: new Float32Array([0]) } }, parameters: { sequence: big, start, end } });
      return [(response.outputs.CORRID!.data as BigUint64Array)[0], (response.outputs.FLAGS!.data as Uint32Array)[0]];
    };
    expect(await step(true, false)).toEqual([BigInt(big), 1]);
    expect(await step(false, true)).toEqual([BigInt(big), 2]);
  });

  it("traces a call made with trace=request.trace() as the calling request's child (parent_id), and one without as a trace of its own", async () => {
    const file = join(await mkdtemp(join(tmpdir(), 'tritium-bls-trace-')), 'trace.json');
    try {
      const server = await python.start(['bls_sync', 'add_sub_onnx'], { trace: { trace_level: ['TIMESTAMPS'], trace_rate: 1, trace_file: file } });
      const inputs = { INPUT0: sixteen(() => 1), INPUT1: sixteen(() => 2) };
      await server.infer('bls_sync', { inputs, id: 'child', parameters: { child_trace: true } });
      await server.infer('bls_sync', { inputs, id: 'apart' });
      await server.stop();
      const entries = JSON.parse(readFileSync(file, 'utf8')) as { model_name?: string; id: number; parent_id?: number; timestamps?: { name: string }[] }[];
      const named = entries.filter((e) => e.model_name);
      // A trace of its own ends (and is written) before its caller's: by id.
      expect(named.map(({ model_name, id, parent_id }) => ({ model_name, id, parent_id })).sort((a, b) => a.id - b.id)).toEqual([
        { model_name: 'bls_sync', id: 1, parent_id: undefined },
        { model_name: 'add_sub_onnx', id: 2, parent_id: 1 },
        { model_name: 'bls_sync', id: 3, parent_id: undefined },
        { model_name: 'add_sub_onnx', id: 4, parent_id: undefined },
      ]);
      // The Python model's execution in three: its inputs handed to the stub, its execute() (with the call in it), its answer read.
      const calling = entries.filter((e) => e.id === 1 && e.timestamps).map((e) => e.timestamps![0]!.name);
      expect(calling).toEqual(['REQUEST_START', 'QUEUE_START', 'COMPUTE_START', 'COMPUTE_INPUT_END', 'COMPUTE_OUTPUT_START', 'COMPUTE_END', 'REQUEST_END']);
    } finally {
      await rm(dirname(file), { recursive: true, force: true });
    }
  });

  it('streams a decoupled model’s responses into a BLS call (exec(decoupled=True))', async () => {
    const server = await python.start(['bls_decoupled', 'repeat']);
    const response = await server.infer('bls_decoupled', { inputs: { IN: int32(4, 5, 6) } });
    expect(values(response.outputs.SUM)).toEqual([15]);
    expect(values(response.outputs.COUNT)).toEqual([3]);
  });
});

describe.skipIf(pythonMissing)('decoupled Python models', () => {
  const python = usePythonServer();

  it('streams N responses through inferStream, then ends', async () => {
    const server = await python.start(['repeat']);
    const responses: InferResponse[] = [];
    for await (const response of server.inferStream('repeat', { inputs: { IN: int32(7, 8, 9) } })) responses.push(response);
    expect(responses.map((r) => values(r.outputs.OUT)[0])).toEqual([7, 8, 9]);
    expect(responses.map((r) => values(r.outputs.IDX)[0])).toEqual([0, 1, 2]);
  });

  it('is warmed before it serves (model_warmup), its stream run to the end', async () => {
    const server = await python.start(['repeat'], { modelControlMode: 'explicit' });
    const config = `${readFileSync(join(MODELS, 'repeat', 'config.pbtxt'), 'utf8')}
model_warmup [ { name: "three" batch_size: 1 inputs { key: "IN" value { data_type: TYPE_INT32 dims: [ 3 ] zero_data: true } } } ]`;
    await server.loadModel('repeat', { config });
    expect(await server.isModelReady('repeat')).toBe(true);
  });

  it('refuses infer() for a decoupled model', async () => {
    const server = await python.start(['repeat']);
    await expect(server.infer('repeat', { inputs: { IN: int32(1) } })).rejects.toMatchObject({ code: 'UNSUPPORTED' });
  });

  it('tells the model when the caller stops reading, and the instance serves the next request', async () => {
    const server = await python.start(['repeat']);
    const delays: Tensor = { datatype: 'UINT32', shape: [50], data: new Uint32Array(50).fill(100) };
    const started = Date.now();
    for await (const response of server.inferStream('repeat', { inputs: { IN: int32(...Array.from({ length: 50 }, (_, i) => i)), DELAY: delays } })) {
      expect(values(response.outputs.OUT)).toEqual([0]);
      break;
    }
    const next: InferResponse[] = [];
    for await (const response of server.inferStream('repeat', { inputs: { IN: int32(1, 2) } })) next.push(response);
    expect(next).toHaveLength(2);
    // 50 responses 100 ms apart would take 5 s: the model stopped when it saw is_cancelled().
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('lets a running execute() see is_cancelled() when the caller aborts', async () => {
    const server = await python.start(['cancellable']);
    const started = Date.now();
    for (let i = 0; i < 2; i++) {
      const controller = new AbortController();
      const pending = server.infer('cancellable', { inputs: { INPUT0: { datatype: 'FP32', shape: [1], data: new Float32Array([1]) } }, signal: controller.signal });
      setTimeout(() => controller.abort(), 200);
      await expect(pending).rejects.toMatchObject({ code: 'CANCELLED' });
    }
    // One instance: the second request ran only once the first execute() saw the cancellation and returned (it waits up to 10 s otherwise).
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
