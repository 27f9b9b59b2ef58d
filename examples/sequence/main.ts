/**
 * Sequence batching with implicit state: a running-sum accumulator whose state lives in the
 * server, not the model or the client. Each request of a sequence carries its correlation id;
 * the sequence batcher feeds the previous OUTPUT_STATE back as INPUT_STATE (zeros at start).
 * Run from the repository root: npx -y pnpm@10.34.9 example:sequence
 */
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { InferenceError, InferenceServer, type SequenceOptions } from '@tritium/core';

const MODELS = fileURLToPath(new URL('../../packages/backend-onnx/models/', import.meta.url));

// accumulator.onnx: OUTPUT = OUTPUT_STATE = INPUT + INPUT_STATE, all FP32 [batch, 1].
// INPUT_STATE/OUTPUT_STATE are not in input/output: they are the sequence's implicit state.
// No CORRID control input, so ids may be integers (up to 2^64-1) or strings. One instance,
// so all three sequences hold slots of one batch: requests of different sequences that arrive
// together share an execution (with the default max_queue_delay 0 the first to arrive runs at
// once; those that come while it runs go in the next batch).
const CONFIG = `platform: "onnxruntime_onnx"
max_batch_size: 8
instance_group { count: 1 kind: KIND_CPU }
input { name: "INPUT" data_type: TYPE_FP32 dims: [ 1 ] }
output { name: "OUTPUT" data_type: TYPE_FP32 dims: [ 1 ] }
sequence_batching {
  max_sequence_idle_microseconds: 5000000
  state {
    input_name: "INPUT_STATE"
    output_name: "OUTPUT_STATE"
    data_type: TYPE_FP32
    dims: [ 1 ]
    initial_state { data_type: TYPE_FP32 dims: [ 1 ] zero_data: true name: "zero" }
  }
}
`;

const repository = await mkdtemp(join(tmpdir(), 'tritium-sequence-'));
await mkdir(join(repository, 'accumulator', '1'), { recursive: true });
await cp(join(MODELS, 'accumulator.onnx'), join(repository, 'accumulator', '1', 'model.onnx'));
await writeFile(join(repository, 'accumulator', 'config.pbtxt'), CONFIG);

const server = await InferenceServer.start({ modelRepository: repository });
try {
  for (const entry of await server.repositoryIndex()) {
    console.log(`${entry.name} v${entry.version}: ${entry.state}${entry.reason ? ` (${entry.reason})` : ''}`);
  }

  /** One step of a sequence: sends `value`, answers the running sum. */
  const step = async (sequence: SequenceOptions, value: number) => {
    const response = await server.infer('accumulator', {
      inputs: { INPUT: { datatype: 'FP32', shape: [1, 1], data: [value] } },
      sequence,
    });
    const output = response.outputs.OUTPUT!;
    if (output.shape.join(',') !== '1,1') throw new Error(`unexpected OUTPUT shape [${output.shape}]`);
    return (output.data as Float32Array)[0]!;
  };

  // Three sequences of different lengths, interleaved: each round sends the next value of every
  // sequence still running, all at once (so the batcher may run them in one execution).
  const sequences: { id: number | bigint | string; values: number[] }[] = [
    { id: 1, values: [1, 2, 3, 4] },
    { id: 2n ** 64n - 1n, values: [10, 20, 30] },
    { id: 'session-a', values: [0.5, 1.5, 2, 4, 8] },
  ];
  const label = (id: number | bigint | string) => (typeof id === 'string' ? `'${id}'` : typeof id === 'bigint' ? `${id}n` : `${id}`);
  const sums = new Map<number | bigint | string, number[]>(sequences.map((s) => [s.id, []]));
  const rounds = Math.max(...sequences.map((s) => s.values.length));
  console.log('\nInterleaved sequences (id: +value = running sum):');
  for (let round = 0; round < rounds; round++) {
    const live = sequences.filter((s) => round < s.values.length);
    const results = await Promise.all(
      live.map((s) => step({ id: s.id, start: round === 0, end: round === s.values.length - 1 }, s.values[round]!)),
    );
    const parts = live.map((s, i) => {
      sums.get(s.id)!.push(results[i]!);
      const flags = [round === 0 ? 'start' : '', round === s.values.length - 1 ? 'end' : ''].filter(Boolean).join(',');
      return `${label(s.id)}: +${s.values[round]} = ${results[i]}${flags ? ` (${flags})` : ''}`;
    });
    console.log(`  round ${round + 1}: ${parts.join('; ')}`);
  }
  console.log('\nRunning sums:');
  for (const s of sequences) console.log(`  sequence ${label(s.id)}: ${sums.get(s.id)!.join(' ')}`);

  // A request for a sequence that was never started (no sequence.start) is refused.
  try {
    await step({ id: 99 }, 1);
    throw new Error('a request for a sequence never started was answered');
  } catch (error) {
    if (!(error instanceof InferenceError)) throw error;
    console.log(`\nA sequence that was never started: ${error.code}: ${error.message}`);
  }

  const s = server.statistics('accumulator').model_stats[0]!;
  console.log(
    `\nStatistics: accumulator v${s.version}: ${s.inference_count} inferences in ${s.execution_count} executions, ` +
      `success ${s.inference_stats.success.count}, fail ${s.inference_stats.fail.count}`,
  );
} finally {
  // Every sequence has ended, so stop() does not wait for one (it waits for live sequences, as Triton does).
  const t0 = performance.now();
  await server.stop();
  console.log(`server stopped in ${(performance.now() - t0).toFixed(0)} ms`);
  await rm(repository, { recursive: true, force: true });
}
