import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { InferenceError } from '@tritium/core';
import type { Tensor } from '@tritium/core';
import { createBackend, onnxBackend } from '../src/index.js';
import { externalDataLocations } from '../src/external-data.js';
import { graphLevel } from '../src/session-options.js';
import { MODELS, fp32, loadDirect, outputsOf, range, request, useTempRepository } from './helpers.js';

const repo = useTempRepository();

describe('the Backend object', () => {
  test('names, platform and default file as core expects; createBackend gives onnxBackend() with its defaults', () => {
    const backend = createBackend();
    expect(backend).toMatchObject({ name: 'onnxruntime', platforms: ['onnxruntime_onnx'], defaultModelFilename: 'model.onnx' });
    expect(Object.keys(backend).sort()).toEqual(Object.keys(onnxBackend()).sort());
  });

  test('when the native binding cannot load, onnxruntime-web serves and the description says why', async () => {
    const backend = onnxBackend({ loadNative: () => Promise.reject(new Error('simulated: no binding for this platform')) });
    const { model, instances } = await loadDirect(backend, repo.current, 'fallback', 'tiny');
    expect(model.description).toMatch(/^onnxruntime-web 1\.30\.0 \(WebAssembly\); in place of onnxruntime-node \(onnxruntime-node cannot load its native binding: simulated: no binding for this platform\)/);
    const [out] = outputsOf(await instances[0]!.execute([request({ INPUT0: fp32([1, 2], [2, 1]) }, ['OUTPUT0'])]));
    expect(Array.from(out!.OUTPUT0!.data as Float32Array)).toEqual([2, 3]);
  });

  test('without onnxruntime-web (an optional peer), the fallback is UNAVAILABLE with the line that installs it', async () => {
    const notInstalled = Object.assign(new Error("Cannot find package 'onnxruntime-web'"), { code: 'ERR_MODULE_NOT_FOUND' });
    const backend = onnxBackend({ loadNative: () => Promise.reject(new Error('simulated')), loadWeb: () => Promise.reject(notInstalled) });
    const error = await loadDirect(backend, repo.current, 'no_web', 'tiny').catch((e) => e);
    expect(error).toMatchObject({ code: 'UNAVAILABLE', message: expect.stringMatching(/onnxruntime-web cannot be loaded \(it is an optional peer of @tritium\/backend-onnx: npm install onnxruntime-web@1\.30\.0\): Cannot find package 'onnxruntime-web'/) });
  });

  test('a model that asks for onnxruntime-node when it cannot load is UNAVAILABLE, not silently moved to web', async () => {
    const backend = onnxBackend({ loadNative: () => Promise.reject(new Error('simulated')) });
    const error = await loadDirect(backend, repo.current, 'needs_node', 'tiny', { parameters: { runtime: { string_value: 'node' } } }).catch((e) => e);
    expect(error).toBeInstanceOf(InferenceError);
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).toMatch(/onnxruntime-node cannot load its native binding: simulated/);
  });
});

describe('execute()', () => {
  const backend = onnxBackend();

  test('requests are gathered into one run and each gets its own rows, from views into larger buffers', async () => {
    const { instances } = await loadDirect(backend, repo.current, 'gather', 'add_sub', { max_batch_size: 8 });
    const big = new Float32Array(range(200));
    const a = (from: number, rows: number): Tensor => ({ datatype: 'FP32', shape: [rows, 16], data: big.subarray(from, from + rows * 16) });
    const results = outputsOf(
      await instances[0]!.execute([
        request({ INPUT0: a(0, 1), INPUT1: a(100, 1) }, ['OUTPUT0']),
        request({ INPUT0: a(16, 2), INPUT1: a(64, 2) }, ['OUTPUT1']),
        request({ INPUT0: a(7, 1), INPUT1: a(7, 1) }, ['OUTPUT0', 'OUTPUT1']),
      ]),
    );
    expect(Array.from(results[0]!.OUTPUT0!.data as Float32Array)).toEqual(range(16).map((i) => i + 100 + i));
    // A batch fetches the union of what its requests asked for; the server drops the rest per request.
    expect(Object.keys(results[1]!).sort()).toEqual(['OUTPUT0', 'OUTPUT1']);
    expect(results[1]!.OUTPUT1!.shape).toEqual([2, 16]);
    expect(Array.from(results[1]!.OUTPUT1!.data as Float32Array)).toEqual(new Array(32).fill(16 - 64));
    expect(Array.from(results[2]!.OUTPUT1!.data as Float32Array)).toEqual(new Array(16).fill(0));
  });

  test('requests whose shapes cannot be stacked run in separate groups', async () => {
    const { instances } = await loadDirect(backend, repo.current, 'groups', 'var_batch');
    const results = outputsOf(
      await instances[0]!.execute([
        request({ INPUT0: fp32([1, 2, 3], [1, 3]) }, ['OUTPUT1']),
        request({ INPUT0: fp32([1, 2], [1, 2]) }, ['OUTPUT1']),
        request({ INPUT0: fp32([4, 5, 6, 7, 8, 9], [2, 3]) }, ['OUTPUT1']),
      ]),
    );
    expect(results.map((r) => Array.from(r.OUTPUT1!.data as Float32Array))).toEqual([[6], [3], [15, 24]]);
  });

  test('sequence control inputs count as model inputs and are fed from the request', async () => {
    const { instances } = await loadDirect(backend, repo.current, 'controls', 'add_sub', {
      max_batch_size: 4,
      input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [16] }],
      output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [16] }],
      sequence_batching: { control_input: [{ name: 'INPUT1', control: [{ kind: 'CONTROL_SEQUENCE_START', fp32_false_true: [0, 1] }] }] },
    });
    const [ok] = outputsOf(await instances[0]!.execute([request({ INPUT0: fp32(range(16), [1, 16]), INPUT1: fp32(new Array(16).fill(1), [1, 16]) }, ['OUTPUT0'])]));
    expect(Array.from(ok!.OUTPUT0!.data as Float32Array)).toEqual(range(16, 1));
    const lacking = request({ INPUT0: fp32(range(16), [1, 16]) }, ['OUTPUT0']);
    const [missing] = (await instances[0]!.execute([lacking]))!;
    expect(missing).toMatchObject({ code: 'INVALID_ARG', message: `model 'controls' request '${lacking.id}': no sequence input 'INPUT1' (the sequence batcher provides it)` });
  });

  test('a cancelled request is answered CANCELLED and the others run', async () => {
    const { instances } = await loadDirect(backend, repo.current, 'cancel', 'tiny');
    const results = await instances[0]!.execute([
      request({ INPUT0: fp32([1], [1, 1]) }, ['OUTPUT0'], { cancelled: true }),
      request({ INPUT0: fp32([5], [1, 1]) }, ['OUTPUT0']),
    ]);
    expect(results![0]).toBeInstanceOf(InferenceError);
    expect((results![0] as InferenceError).code).toBe('CANCELLED');
    expect(Array.from((results![1] as Record<string, Tensor>).OUTPUT0!.data as Float32Array)).toEqual([6]);
  });

  test('BYTES that onnxruntime string tensors cannot hold fail that request with INVALID_ARG', async () => {
    const { instances } = await loadDirect(backend, repo.current, 'strings', 'identity_string');
    const bytes = (data: Array<string | Uint8Array>): Tensor => ({ datatype: 'BYTES', shape: [1, data.length], data });
    const requests = [
      request({ INPUT0: bytes(['fine', Uint8Array.from([0x6f, 0x6b])]) }, ['OUTPUT0']),
      request({ INPUT0: bytes(['a\0b', 'x']) }, ['OUTPUT0']),
      request({ INPUT0: bytes(['x', Uint8Array.from([0xff, 0xfe])]) }, ['OUTPUT0']),
      request({ INPUT0: bytes(['also', 'fine']) }, ['OUTPUT0']),
    ];
    const results = await instances[0]!.execute(requests);
    // Each request is checked before the batch is gathered, so only the bad ones fail, each naming the model and itself.
    expect((results![0] as Record<string, Tensor>).OUTPUT0!.data).toEqual(['fine', 'ok']);
    expect((results![3] as Record<string, Tensor>).OUTPUT0!.data).toEqual(['also', 'fine']);
    expect(results![1]).toMatchObject({
      code: 'INVALID_ARG',
      message: expect.stringMatching(new RegExp(`^model 'strings' request '${requests[1]!.id}' input 'INPUT0': BYTES element 0 contains a NUL character`)),
    });
    expect(results![2]).toMatchObject({
      code: 'INVALID_ARG',
      message: expect.stringMatching(new RegExp(`^model 'strings' request '${requests[2]!.id}' input 'INPUT0': BYTES element 1 is not UTF-8`)),
    });
  });

  test('a request that names no outputs gets all of them (onnxruntime is never given an empty fetch list)', async () => {
    const { instances } = await loadDirect(backend, repo.current, 'no_outputs', 'add_sub', { max_batch_size: 8 });
    const x = { INPUT0: fp32(range(16), [1, 16]), INPUT1: fp32(range(16), [1, 16]) };
    const [alone] = outputsOf(await instances[0]!.execute([request(x, [])]));
    expect(Object.keys(alone!).sort()).toEqual(['OUTPUT0', 'OUTPUT1']);
    const batched = outputsOf(await instances[0]!.execute([request(x, []), request(x, [])]));
    expect(batched.map((outputs) => Array.from(outputs.OUTPUT1!.data as Float32Array))).toEqual([new Array(16).fill(0), new Array(16).fill(0)]);
  });
});

describe('helpers', () => {
  test('graph optimization levels follow Triton: -1 basic, 1 extended, 2 disabled, else all', () => {
    expect([-1, 0, 1, 2, 3, undefined].map(graphLevel)).toEqual(['basic', 'all', 'extended', 'disabled', 'all', 'all']);
  });

  test('external data locations are found by walking the model: initializers, subgraphs, not metadata', async () => {
    const locations = async (file: string) => externalDataLocations(await readFile(join(MODELS, file)));
    expect(await locations('external_weights.onnx/model.onnx')).toEqual(['external_weights.bin']);
    expect(await locations('external_subgraph.onnx/model.onnx')).toEqual(['branch_weights.bin']);
    expect(await locations('metadata_location.onnx')).toEqual([]);
    expect(await locations('add_sub.onnx')).toEqual([]);
    expect(() => externalDataLocations(new TextEncoder().encode('not a protobuf message'))).toThrow();
  });

});
