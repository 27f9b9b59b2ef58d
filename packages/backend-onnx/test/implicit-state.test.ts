import { describe, expect, test } from 'vitest';
import type { ModelConfig } from '@tritium/core';
import { onnxBackend } from '../src/index.js';
import { fp32, loadDirect, outputsOf, request, useTempRepository } from './helpers.js';

const repo = useTempRepository();
const backend = onnxBackend();

/** models/accumulator.onnx: OUTPUT = OUTPUT_STATE = INPUT + INPUT_STATE. */
const accumulatorConfig = (state: Record<string, unknown> = {}): ModelConfig => ({
  max_batch_size: 4,
  input: [{ name: 'INPUT', data_type: 'TYPE_FP32', dims: [1] }],
  output: [{ name: 'OUTPUT', data_type: 'TYPE_FP32', dims: [1] }],
  sequence_batching: {
    state: [{ input_name: 'INPUT_STATE', output_name: 'OUTPUT_STATE', data_type: 'TYPE_FP32', dims: [1], ...state }],
  },
});

describe('implicit sequence state', () => {
  test('state inputs are fed and state outputs fetched like ordinary tensors, across a batch', async () => {
    const { instances } = await loadDirect(backend, repo.current, 'accumulator', 'accumulator', accumulatorConfig());
    // As the sequence batcher hands them over: each request carries its sequence's state and asks for the state output.
    const results = outputsOf(
      await instances[0]!.execute([
        request({ INPUT: fp32([2], [1, 1]), INPUT_STATE: fp32([0], [1, 1]) }, ['OUTPUT', 'OUTPUT_STATE']),
        request({ INPUT: fp32([5], [1, 1]), INPUT_STATE: fp32([10], [1, 1]) }, ['OUTPUT', 'OUTPUT_STATE']),
      ]),
    );
    expect(results.map((r) => Array.from(r.OUTPUT!.data as Float32Array))).toEqual([[2], [15]]);
    expect(results.map((r) => r.OUTPUT_STATE!.shape)).toEqual([[1, 1], [1, 1]]);
    expect(results.map((r) => Array.from(r.OUTPUT_STATE!.data as Float32Array))).toEqual([[2], [15]]);
  });

  test('a request without its state input fails with INVALID_ARG', async () => {
    const { instances } = await loadDirect(backend, repo.current, 'stateless', 'accumulator', accumulatorConfig());
    const lacking = request({ INPUT: fp32([1], [1, 1]) }, ['OUTPUT']);
    const [result] = (await instances[0]!.execute([lacking]))!;
    expect(result).toMatchObject({
      code: 'INVALID_ARG',
      message: `model 'stateless' request '${lacking.id}': no sequence input 'INPUT_STATE' (the sequence batcher provides it)`,
    });
  });

  test('a state the model lacks, or of another datatype, is refused at load', async () => {
    await expect(loadDirect(backend, repo.current, 'bad_state_name', 'accumulator', accumulatorConfig({ output_name: 'NEXT_STATE' }))).rejects.toMatchObject({
      code: 'INVALID_ARG',
      message: expect.stringMatching(/configuration state output 'NEXT_STATE' is not in the model, whose outputs are: 'OUTPUT', 'OUTPUT_STATE'/),
    });
    await expect(loadDirect(backend, repo.current, 'bad_state_type', 'accumulator', accumulatorConfig({ data_type: 'TYPE_INT32' }))).rejects.toMatchObject({
      code: 'INVALID_ARG',
      message: expect.stringMatching(/expects datatype TYPE_INT32 for state input 'INPUT_STATE', model provides TYPE_FP32/),
    });
  });
});
