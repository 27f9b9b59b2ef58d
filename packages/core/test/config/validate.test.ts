import { describe, expect, it } from 'vitest';
import { parseModelConfig, validateModelConfig, type ModelConfig } from '../../src/config/index.js';
import { RICH_CONFIG, invalidArgMessage } from './helpers.js';

const BASE = `name: "m"
platform: "onnxruntime_onnx"
max_batch_size: 8
input { name: "IN" data_type: TYPE_FP32 dims: [4] }
output { name: "OUT" data_type: TYPE_FP32 dims: [4] }`;

/** BASE with `extra` text appended, or with fields replaced by `override`. */
const config = (extra = '', override: ModelConfig = {}): ModelConfig => ({ ...parseModelConfig(`${BASE}\n${extra}`), ...override });
const accept = (extra = '', override: ModelConfig = {}) => validateModelConfig(config(extra, override));
const refuse = (extra = '', override: ModelConfig = {}) => invalidArgMessage(() => validateModelConfig(config(extra, override)));

const ENSEMBLE = `name: "e"
platform: "ensemble"
max_batch_size: 8
input { name: "IN" data_type: TYPE_FP32 dims: [4] }
output { name: "OUT" data_type: TYPE_FP32 dims: [4] }`;
const ensemble = (scheduling: string, extra = '') => parseModelConfig(`${ENSEMBLE}\nensemble_scheduling { ${scheduling} }\n${extra}`);
const step = (model: string, inputs: Record<string, string>, outputs: Record<string, string>) =>
  `step { model_name: "${model}" ${Object.entries(inputs).map(([k, v]) => `input_map { key: "${k}" value: "${v}" }`).join(' ')} ${Object.entries(outputs).map(([k, v]) => `output_map { key: "${k}" value: "${v}" }`).join(' ')} }`;

describe('validateModelConfig: accepted configs', () => {
  it('returns the normalized config', () => {
    const validated = accept();
    expect(validated.backend).toBe('onnxruntime');
    expect(validated.instance_group).toEqual([expect.objectContaining({ name: 'm', kind: 'KIND_CPU', count: 2 })]);
  });

  it('accepts a config with most features, a custom backend and a valid ensemble', () => {
    expect(validateModelConfig(parseModelConfig(RICH_CONFIG)).name).toBe('rich');
    expect(validateModelConfig({ name: 'add.identity' }).backend).toBe('identity');
    const chain = ensemble(`${step('a', { A_IN: 'IN' }, { A_OUT: 't' })} ${step('b', { B_IN: 't', B_IN2: 'IN' }, { B_OUT: 'OUT' })}`);
    expect(validateModelConfig(chain).ensemble_scheduling?.step).toHaveLength(2);
  });
});

describe('validateModelConfig: model', () => {
  it('names the model and the field in every message', () => {
    expect(refuse('', { max_batch_size: -1 })).toBe("model 'm': 'max_batch_size' must be non-negative, got -1");
  });

  it.each([
    ['a missing name', { name: '' }, /^model configuration must specify 'name'$/],
    ['no platform or backend', { platform: '' }, /must specify 'platform' or 'backend'/],
    ['an unknown platform', { platform: 'onnxruntime' }, /platform 'onnxruntime' names no backend Tritium knows/],
    ['a platform and backend that disagree', { backend: 'tensorrt' }, /'platform' 'onnxruntime_onnx' does not go with 'backend' 'tensorrt' \(expected 'tensorrt_plan'\)/],
    ['an ensemble with a backend', { platform: 'ensemble', backend: 'onnxruntime' }, /an ensemble \(platform 'ensemble'\) must not specify a 'backend'/],
    ['a negative max_batch_size', { max_batch_size: -2 }, /'max_batch_size' must be non-negative, got -2/],
  ] as const)('refuses %s', (_, override, pattern) => {
    expect(refuse('', override)).toMatch(pattern);
  });

  it('refuses the response cache on decoupled models', () => {
    expect(refuse('model_transaction_policy { decoupled: true } response_cache { enable: true }')).toMatch(/'response_cache' does not support decoupled models/);
    expect(accept('model_transaction_policy { decoupled: true }').model_transaction_policy.decoupled).toBe(true);
  });

  it.each([
    ['a metric control without identifier', 'metric_control { histogram_options { buckets: 1 } }', /model_metrics\.metric_control\[0\] must specify 'metric_identifier'/],
    ['an empty metric family', 'metric_control { metric_identifier {} histogram_options { buckets: 1 } }', /metric_identifier must specify a non-empty 'family'/],
    ['a metric control without histogram', 'metric_control { metric_identifier { family: "f" } }', /must specify 'histogram_options'/],
    ['a histogram without buckets', 'metric_control { metric_identifier { family: "f" } histogram_options {} }', /must specify non-empty 'buckets'/],
  ])('refuses %s', (_, metrics, pattern) => {
    expect(refuse(`model_metrics { ${metrics} }`)).toMatch(pattern);
  });
});

describe('validateModelConfig: instance groups', () => {
  it.each([
    ['KIND_CPU with GPUs', 'instance_group { name: "g" kind: KIND_CPU gpus: 1 }', /instance group g has kind KIND_CPU but specifies 'gpus' \[1\]/],
    ['a negative GPU id', 'instance_group { kind: KIND_GPU gpus: [0, -1] }', /instance group m_0 specifies invalid or unsupported gpu id -1/],
    ['KIND_MODEL with GPUs', 'instance_group { kind: KIND_MODEL gpus: 1 }', /has kind KIND_MODEL but specifies 'gpus'/],
    ['a profile outside TensorRT', 'instance_group { profile: "0" }', /instance group m_0 specifies 'profile', which only TensorRT models support/],
  ])('refuses %s', (_, groups, pattern) => {
    expect(refuse(groups)).toMatch(pattern);
  });

  it('leaves KIND_GPU groups to the backend, which alone knows its GPUs', () => {
    expect(accept('instance_group { kind: KIND_GPU gpus: [0, 1] }').instance_group[0]).toMatchObject({ kind: 'KIND_GPU', gpus: [0, 1] });
  });

  it('checks TensorRT profiles are non-negative integers', () => {
    const tensorrt = { platform: 'tensorrt_plan' };
    expect(accept('instance_group { profile: ["0", "2"] }', tensorrt).instance_group[0]?.profile).toEqual(['0', '2']);
    expect(refuse('instance_group { profile: "-1" }', tensorrt)).toMatch(/specifies invalid profile '-1'/);
    expect(refuse('instance_group { profile: "" }', tensorrt)).toMatch(/specifies invalid profile ''/);
  });
});

describe('validateModelConfig: inputs and outputs', () => {
  const io = (role: 'input' | 'output', body: string, extra = '') => refuse(extra, parseModelConfig(`${role} { ${body} }`));

  it.each([
    ['a missing name', 'input', 'data_type: TYPE_FP32 dims: 1', /input 0 must specify 'name'/],
    ['a missing data_type', 'input', 'name: "x" dims: 1', /input 'x' must specify 'data_type'/],
    ['missing dims', 'output', 'name: "y" data_type: TYPE_FP32', /output 'y' must specify 'dims'/],
    ['a zero dimension', 'input', 'name: "x" data_type: TYPE_FP32 dims: [1, 0]', /input 'x' has dims \[1, 0\]: each dimension must be an integer >= 1, or -1/],
    ['a dimension below -1', 'output', 'name: "y" data_type: TYPE_FP32 dims: [-2]', /output 'y' has dims \[-2\]/],
    ['a zero reshape dimension', 'input', 'name: "x" data_type: TYPE_FP32 dims: [4] reshape { shape: [0] }', /input 'x' has reshape \[0\]: each reshape dimension/],
    ['a reshape of another size', 'input', 'name: "x" data_type: TYPE_FP32 dims: [4] reshape { shape: [2, 3] }', /input 'x' has dims \[4\] and reshape \[2, 3\] of different size/],
    ['a fixed reshape of variable dims', 'output', 'name: "y" data_type: TYPE_FP32 dims: [-1] reshape { shape: [2] }', /of different size/],
    ['variable runs of another size', 'input', 'name: "x" data_type: TYPE_FP32 dims: [2, -1, 3] reshape { shape: [3, -1, 2] }', /of different size/],
    ['another number of variable dims', 'input', 'name: "x" data_type: TYPE_FP32 dims: [-1] reshape { shape: [-1, -1] }', /different number of variable-size dimensions/],
    ['NCHW without 3 dims', 'input', 'name: "x" data_type: TYPE_FP32 format: FORMAT_NCHW dims: [3, 4]', /input 'x' has format FORMAT_NCHW, which requires 3 dims/],
    ['a shape tensor outside TensorRT', 'output', 'name: "y" data_type: TYPE_INT32 dims: [2] is_shape_tensor: true', /output 'y' sets 'is_shape_tensor', which only the TensorRT platform supports/],
    ['non-linear IO outside TensorRT', 'input', 'name: "x" data_type: TYPE_FP32 dims: [1, 2, 3] is_non_linear_format_io: true', /input 'x' sets 'is_non_linear_format_io', which only the TensorRT platform/],
  ] as const)('refuses %s', (_, role, body, pattern) => {
    expect(io(role, body)).toMatch(pattern);
  });

  it('refuses an empty reshape only when the model does not batch', () => {
    const scalar = parseModelConfig('input { name: "x" data_type: TYPE_FP32 dims: [1] reshape {} }');
    expect(accept('', scalar).input[0]?.reshape).toEqual({ shape: [] });
    expect(refuse('', { ...scalar, max_batch_size: 0 })).toMatch(/input 'x' cannot have an empty 'reshape' when max_batch_size is 0/);
  });

  it('accepts reshapes whose runs between variable dimensions match', () => {
    const reshaped = parseModelConfig('input { name: "x" data_type: TYPE_FP32 dims: [2, 4, -1, 6] reshape { shape: [8, -1, 1, 6] } }');
    expect(accept('', reshaped).input[0]?.reshape?.shape).toEqual([8, -1, 1, 6]);
  });

  it('accepts TensorRT-only properties on TensorRT', () => {
    const tensorrt = parseModelConfig('platform: "tensorrt_plan" input { name: "x" data_type: TYPE_INT32 dims: [2] is_shape_tensor: true }');
    expect(accept('', tensorrt).input[0]?.is_shape_tensor).toBe(true);
    const nonLinear = parseModelConfig('platform: "tensorrt_plan" input { name: "x" data_type: TYPE_FP32 dims: [2] is_non_linear_format_io: true }');
    expect(refuse('', nonLinear)).toMatch(/input 'x' sets 'is_non_linear_format_io', which requires 3 dims, got \[2\]/);
  });

  it.each([
    ['a batch input without source', 'batch_input { kind: BATCH_ITEM_SHAPE target_name: "B" data_type: TYPE_INT32 }', /batch_input\[0\] of kind 'BATCH_ITEM_SHAPE' expects 1 'source_input', got 0/],
    ['a batch input with an unknown source', 'batch_input { target_name: "B" data_type: TYPE_INT32 source_input: "NOPE" }', /batch_input\[0\] names unknown source input 'NOPE'/],
    ['a batch input of another data type', 'batch_input { target_name: "B" data_type: TYPE_INT64 source_input: "IN" }', /batch_input\[0\] has 'data_type' TYPE_INT64; it must be TYPE_INT32 or TYPE_FP32/],
    ['a batch output with two sources', 'batch_output { target_name: "OUT" source_input: ["IN", "IN"] }', /batch_output\[0\] of kind 'BATCH_SCATTER_WITH_INPUT_SHAPE' expects 1 'source_input', got 2/],
    ['a batch output with an unknown target', 'batch_output { target_name: "NOPE" source_input: "IN" }', /batch_output\[0\] names unknown target output 'NOPE'/],
    ['a batch output naming a target twice', 'batch_output { target_name: ["OUT", "OUT"] source_input: "IN" }', /names target output 'OUT' in 'target_name' more than once/],
  ])('refuses %s', (_, batchIO, pattern) => {
    expect(refuse(batchIO)).toMatch(pattern);
  });

  it('accepts well-formed batch inputs and outputs', () => {
    const validated = accept('batch_input { kind: BATCH_ELEMENT_COUNT target_name: "COUNT" data_type: TYPE_FP32 source_input: "IN" } batch_output { target_name: "OUT" source_input: "IN" }');
    expect(validated.batch_input).toHaveLength(1);
  });
});

describe('validateModelConfig: dynamic batching', () => {
  it.each([
    ['a preferred size of 0', 'preferred_batch_size: [0]', /dynamic_batching\.preferred_batch_size 0 must be positive/],
    ['a preferred size above max_batch_size', 'preferred_batch_size: [16]', /dynamic_batching\.preferred_batch_size 16 must not exceed max_batch_size 8/],
    ['a default priority level of 0', 'priority_levels: 3', /dynamic_batching\.default_priority_level 0 must be in range \[1, 3\]/],
    ['a default priority level above the levels', 'priority_levels: 3 default_priority_level: 4', /default_priority_level 4 must be in range \[1, 3\]/],
    ['a queue policy for level 0', 'priority_levels: 2 default_priority_level: 1 priority_queue_policy { key: 0 value {} }', /priority_queue_policy has priority level 0, outside the range \[1, 2\]/],
    ['preserve_ordering with priorities', 'preserve_ordering: true priority_levels: 2 default_priority_level: 1', /preserve_ordering allows only one priority level, but priority_levels is 2/],
    ['preserve_ordering with a delaying default policy', 'preserve_ordering: true default_queue_policy { timeout_action: DELAY default_timeout_microseconds: 5 }', /default_queue_policy has timeout_action DELAY, which 'preserve_ordering' does not allow/],
    [
      'preserve_ordering with a delaying priority policy',
      'preserve_ordering: true priority_levels: 1 default_priority_level: 1 priority_queue_policy { key: 1 value { timeout_action: DELAY default_timeout_microseconds: 5 } }',
      /priority_queue_policy for level 1 has timeout_action DELAY/,
    ],
  ])('refuses %s', (_, batching, pattern) => {
    expect(refuse(`dynamic_batching { ${batching} }`)).toMatch(pattern);
  });

  it('ignores priority fields when priorities are off, and DELAY without a timeout', () => {
    expect(accept('dynamic_batching { default_priority_level: 9 priority_queue_policy { key: 0 value {} } }').dynamic_batching?.priority_levels).toBe(0);
    expect(accept('dynamic_batching { preserve_ordering: true default_queue_policy { timeout_action: DELAY } }').dynamic_batching?.preserve_ordering).toBe(true);
  });
});

describe('validateModelConfig: sequence batching', () => {
  const control = (name: string, body: string) => `control_input { name: "${name}" control { ${body} } }`;

  it.each([
    ['a nameless control input', control('', 'kind: CONTROL_SEQUENCE_START int32_false_true: [0, 1]'), /sequence_batching\.control_input\[0\] must have a 'name'/],
    ['a control tensor given twice', `${control('C', 'kind: CONTROL_SEQUENCE_START int32_false_true: [0, 1]')} ${control('C', 'kind: CONTROL_SEQUENCE_END int32_false_true: [0, 1]')}`, /control tensor 'C' is given more than once/],
    ['two END controls', `${control('A', 'kind: CONTROL_SEQUENCE_END int32_false_true: [0, 1]')} ${control('B', 'kind: CONTROL_SEQUENCE_END int32_false_true: [0, 1]')}`, /multiple CONTROL_SEQUENCE_END control tensors: 'A', 'B'/],
    ['a control without values', control('R', 'kind: CONTROL_SEQUENCE_READY'), /control CONTROL_SEQUENCE_READY on tensor 'R' must specify one of 'int32_false_true', 'fp32_false_true' or 'bool_false_true'/],
    ['a control with two value kinds', control('S', 'kind: CONTROL_SEQUENCE_START int32_false_true: [0, 1] bool_false_true: [false, true]'), /specifies more than one of/],
    ['a control with three values', control('S', 'kind: CONTROL_SEQUENCE_START fp32_false_true: [0, 1, 2]'), /'fp32_false_true' must have exactly 2 entries/],
    ['a correlation id with values', control('I', 'kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64 int32_false_true: [0, 1]'), /CONTROL_SEQUENCE_CORRID on tensor 'I' must not specify/],
    ['a correlation id of another type', control('I', 'kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_FP32'), /has 'data_type' TYPE_FP32; allowed are TYPE_UINT64, TYPE_INT64, TYPE_UINT32, TYPE_INT32, TYPE_STRING/],
    ['an oldest preferred size above max_batch_size', 'oldest { preferred_batch_size: 9 }', /sequence_batching\.oldest\.preferred_batch_size 9 must not exceed max_batch_size 8/],
    ['a slot utilization above 1', 'direct { minimum_slot_utilization: 1.5 }', /minimum_slot_utilization 1\.5 must be in range \[0\.0, 1\.0\]/],
  ])('refuses %s', (_, batching, pattern) => {
    expect(refuse(`sequence_batching { ${batching} }`)).toMatch(pattern);
  });

  it('refuses the response cache with sequence batching', () => {
    expect(refuse('sequence_batching {} response_cache { enable: true }')).toMatch(/'response_cache' does not support sequence_batching models/);
  });

  it('accepts well-formed controls', () => {
    const controls = [
      control('START', 'kind: CONTROL_SEQUENCE_START int32_false_true: [0, 1]'),
      control('END', 'kind: CONTROL_SEQUENCE_END bool_false_true: [false, true]'),
      control('READY', 'kind: CONTROL_SEQUENCE_READY fp32_false_true: [0, 1]'),
      control('CORRID', 'kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_STRING'),
    ].join(' ');
    expect(accept(`sequence_batching { ${controls} direct { minimum_slot_utilization: 0.5 } }`).sequence_batching?.control_input).toHaveLength(4);
  });
});

describe('validateModelConfig: ensembles', () => {
  const refuseEnsemble = (scheduling: string, extra = '') => invalidArgMessage(() => validateModelConfig(ensemble(scheduling, extra)));
  const one = step('a', { A_IN: 'IN' }, { A_OUT: 'OUT' });

  it('refuses ensemble_scheduling outside the ensemble platform, and an ensemble without it', () => {
    expect(refuse(`ensemble_scheduling { ${one} }`)).toMatch(/'ensemble_scheduling' can only be set for platform 'ensemble', but the platform is 'onnxruntime_onnx'/);
    expect(invalidArgMessage(() => validateModelConfig(parseModelConfig(ENSEMBLE)))).toMatch(/^model 'e': an ensemble \(platform 'ensemble'\) must specify 'ensemble_scheduling'/);
  });

  it.each([
    ['instance groups', one, 'instance_group {}', /an ensemble cannot specify 'instance_group'/],
    ['optimization', one, 'optimization {}', /an ensemble cannot specify 'optimization'/],
    ['warmup', one, 'model_warmup {}', /an ensemble cannot specify 'model_warmup'/],
    ['no steps', '', '', /ensemble_scheduling must specify at least one 'step'/],
    ['a step without model', 'step { input_map { key: "a" value: "IN" } output_map { key: "b" value: "OUT" } }', '', /ensemble_scheduling\.step\[0\] must specify 'model_name'/],
    ['a step without input_map', 'step { model_name: "a" output_map { key: "b" value: "OUT" } }', '', /step\[0\] must specify 'input_map'/],
    ['a step without output_map', 'step { model_name: "a" input_map { key: "a" value: "IN" } }', '', /step\[0\] must specify 'output_map'/],
    ['a tensor written twice', `${one} ${step('b', { B_IN: 'IN' }, { B_OUT: 'OUT' })}`, '', /ensemble tensor 'OUT' appears in more than one output_map \(again in ensemble_scheduling\.step\[1\]\)/],
    ['an unused ensemble input', step('a', { A_IN: 'X' }, { A_OUT: 'OUT' }), '', /ensemble input 'IN' is not used by any step/],
    ['an output no step produces', step('a', { A_IN: 'IN' }, { A_OUT: 'Y' }), '', /ensemble output 'OUT' is not produced by any step/],
    [
      'an output cut off from the inputs',
      `${step('a', { A_IN: 'IN' }, { A_OUT: 't' })} ${step('b', { B_IN: 't', B_IN2: 'loose' }, { B_OUT: 'OUT' })}`,
      '',
      /ensemble output 'OUT' is not written: it depends on 'loose', which is not connected to the ensemble inputs/,
    ],
    ['a tensor nothing reads', step('a', { A_IN: 'IN' }, { A_OUT: 'OUT', A_EXTRA: 'spare' }), '', /ensemble tensor 'spare' is unused: nothing reads it/],
  ])('refuses %s', (_, scheduling, extra, pattern) => {
    expect(refuseEnsemble(scheduling, extra)).toMatch(pattern);
  });
});
