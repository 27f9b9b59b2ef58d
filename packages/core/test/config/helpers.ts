import { expect } from 'vitest';
import { modelConfigToJson, parseModelConfig, printModelConfig, validateModelConfig, type ModelConfig } from '../../src/config/index.js';
import { InferenceError } from '../../src/errors.js';

/** Runs `action`, expects an INVALID_ARG InferenceError, and returns its message. */
export function invalidArgMessage(action: () => unknown): string {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(InferenceError);
    expect((error as InferenceError).code).toBe('INVALID_ARG');
    return (error as InferenceError).message;
  }
  throw new Error('expected an INVALID_ARG InferenceError, but nothing was thrown');
}

/** A config that uses most of the schema and most of the text-format syntax. */
export const RICH_CONFIG = `# A model with most things set
name: "rich"
platform: "onnxruntime_onnx"
max_batch_size: 8
version_policy: { specific { versions: [1, 3] } }
input [
  {
    name: "INPUT0"
    data_type: TYPE_FP32
    format: FORMAT_NCHW
    dims: [ 3, -1, -1 ]
    allow_ragged_batch: true
  },
  {
    name: 'INPUT1'; data_type: TYPE_STRING; dims: [ 1 ]; reshape: { shape: [ ] }; optional: True
  }
]
output {
  name: "OUTPUT0"
  data_type: TYPE_INT64
  dims: 16
  label_filename: "labels.txt"
}
instance_group [ { name: "cpus" kind: KIND_CPU count: 2 }, < kind: KIND_MODEL > ]
dynamic_batching {
  preferred_batch_size: [ 4, 8 ]
  max_queue_delay_microseconds: 100
  priority_levels: 2
  default_priority_level: 1
  default_queue_policy { timeout_action: DELAY default_timeout_microseconds: 0x10 allow_timeout_override: t }
  priority_queue_policy { key: 2 value: { max_queue_size: 010 } }
}
optimization {
  graph { level: -1 }
  execution_accelerators {
    cpu_execution_accelerator: [ { name: "openvino" parameters { key: "precision" value: "FP16" } } ]
  }
  input_pinned_memory { enable: false }
}
parameters { key: "EXECUTION_ENV_PATH" value: { string_value: "$$TRITON_MODEL_DIRECTORY/env.tar.gz" } }
parameters: { key: "escaped" value: { string_value: "tab\\there \\"quoted\\" \\u00e9 \\303\\251" " and more" } }
metric_tags { key: "team" value: "vision" }
model_warmup [
  {
    name: "zeros"
    batch_size: 1
    inputs { key: "INPUT0" value: { data_type: TYPE_FP32 dims: [ 3, 4, 4 ] zero_data: true } }
  }
]
model_metrics {
  metric_control: [
    { metric_identifier: { family: "nv_inference_request_duration" } histogram_options: { buckets: [ .5, 1e-3, 2.0f, 10 ] } }
  ]
}
model_transaction_policy { decoupled: false }
response_cache { enable: true }
`;

/** A small deterministic PRNG (mulberry32), so a failing run can be replayed from its seed. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NOISE = ['{', '}', '[', ']', '<', '>', ':', ',', ';', '-', '"', "'", '\\', '#', '\n', '0x', '1e', '.', 'inf', 'name', 'input', '\u0000', '\uffff', '9'.repeat(30), ' '];

/** One random edit: truncate, delete a span, insert noise, replace a character, or duplicate a span. */
function mutate(text: string, next: () => number): string {
  const at = Math.floor(next() * text.length);
  switch (Math.floor(next() * 5)) {
    case 0:
      return text.slice(0, at);
    case 1:
      return text.slice(0, at) + text.slice(at + 1 + Math.floor(next() * 20));
    case 2:
      return text.slice(0, at) + NOISE[Math.floor(next() * NOISE.length)] + text.slice(at);
    case 3:
      return text.slice(0, at) + String.fromCharCode(Math.floor(next() * 0x10000)) + text.slice(at + 1);
    default: {
      const from = Math.floor(next() * text.length);
      return text.slice(0, at) + text.slice(from, from + 40) + text.slice(at);
    }
  }
}

/**
 * Parses randomly mutated copies of `samples` until `maxRuns` or `millis` is reached;
 * throws on anything but an InferenceError that gives a line:column. What parses is
 * also printed, validated and turned into JSON, which may refuse it only with an
 * InferenceError.
 */
export function fuzzParser(samples: readonly string[], options: { seed: number; maxRuns: number; millis: number }): { runs: number; refused: number } {
  const next = random(options.seed);
  const deadline = performance.now() + options.millis;
  let runs = 0;
  let refused = 0;
  for (; runs < options.maxRuns && performance.now() < deadline; runs++) {
    let text = samples[Math.floor(next() * samples.length)]!;
    for (let edits = 1 + Math.floor(next() * 3); edits > 0; edits--) text = mutate(text, next);
    let config: ModelConfig;
    try {
      config = parseModelConfig(text, 'fuzz.pbtxt');
    } catch (error) {
      refused++;
      if (!(error instanceof InferenceError) || !/^fuzz\.pbtxt:\d+:\d+: /.test(error.message)) {
        throw new Error(`unexpected parse failure on input ${JSON.stringify(text)}: ${String(error)}`);
      }
      continue;
    }
    try {
      expect(parseModelConfig(printModelConfig(config))).toEqual(config);
      modelConfigToJson(validateModelConfig(config));
    } catch (error) {
      if (!(error instanceof InferenceError)) throw new Error(`unexpected failure on input ${JSON.stringify(text)}: ${String(error)}`);
    }
  }
  return { runs, refused };
}
