import { describe, expect, it } from 'vitest';
import { modelConfigToJson, parseModelConfig, validateModelConfig } from '../../src/config/index.js';
import { RICH_CONFIG } from './helpers.js';

describe('modelConfigToJson', () => {
  it("gives Triton's endpoint form of a normalized config: every scalar, list and map present, in proto order", () => {
    const config = validateModelConfig(
      parseModelConfig(`name: "densenet" platform: "onnxruntime_onnx" max_batch_size: 0
        input { name: "data_0" data_type: TYPE_FP32 format: FORMAT_NCHW dims: [3, 224, 224] reshape { shape: [1, 3, 224, 224] } }
        output { name: "prob" data_type: TYPE_FP32 dims: [1000] label_filename: "labels.txt" }`),
    );
    const json = modelConfigToJson(config);
    expect(json).toEqual({
      name: 'densenet',
      platform: 'onnxruntime_onnx',
      backend: 'onnxruntime',
      runtime: '',
      version_policy: { latest: { num_versions: 1 } },
      max_batch_size: 0,
      input: [
        {
          name: 'data_0',
          data_type: 'TYPE_FP32',
          format: 'FORMAT_NCHW',
          dims: [3, 224, 224],
          reshape: { shape: [1, 3, 224, 224] },
          is_shape_tensor: false,
          allow_ragged_batch: false,
          optional: false,
          is_non_linear_format_io: false,
        },
      ],
      output: [{ name: 'prob', data_type: 'TYPE_FP32', dims: [1000], label_filename: 'labels.txt', is_shape_tensor: false, is_non_linear_format_io: false }],
      batch_input: [],
      batch_output: [],
      optimization: {
        priority: 'PRIORITY_DEFAULT',
        input_pinned_memory: { enable: true },
        output_pinned_memory: { enable: true },
        gather_kernel_buffer_threshold: 0,
        eager_batching: false,
      },
      instance_group: [{ name: 'densenet', kind: 'KIND_CPU', count: 2, gpus: [], secondary_devices: [], profile: [], passive: false, host_policy: '' }],
      default_model_filename: 'model.onnx',
      cc_model_filenames: {},
      metric_tags: {},
      parameters: {},
      model_warmup: [],
      model_transaction_policy: { decoupled: false },
      response_cache: { enable: false },
    });
    expect(Object.keys(json)).toEqual(ORDER.filter((key) => key in json));
  });

  it('prints defaults for absent scalars but leaves unset messages and oneof members out', () => {
    const json = modelConfigToJson({ name: 'm', sequence_batching: { state: [{ initial_state: [{ name: 'init' }] }] } });
    expect(json['version_policy']).toBeUndefined();
    expect(json['optimization']).toBeUndefined();
    expect(json['max_batch_size']).toBe(0);
    const sequence = json['sequence_batching'] as Record<string, unknown>;
    expect(sequence['direct']).toBeUndefined();
    expect(sequence['max_sequence_idle_microseconds']).toBe(0);
    expect(sequence['state']).toEqual([
      {
        input_name: '',
        output_name: '',
        data_type: 'TYPE_INVALID',
        dims: [],
        initial_state: [{ data_type: 'TYPE_INVALID', dims: [], name: 'init' }],
        use_same_buffer_for_input_output: false,
        use_growable_memory: false,
      },
    ]);
  });

  it('writes the 64-bit fields Triton fixes as numbers and the others as protobuf strings', () => {
    const json = modelConfigToJson(
      parseModelConfig(`
        version_policy { specific { versions: [2, 3] } }
        instance_group { secondary_devices { device_id: 7 } }
        optimization { cuda { graph_spec { input { key: "x" value { dim: [4] } } } } }
        sequence_batching {
          max_sequence_idle_microseconds: 100
          oldest { max_queue_delay_microseconds: 5 }
          state { dims: [2] initial_state { dims: [2] zero_data: true } }
        }
        model_warmup { inputs { key: "x" value { dims: [1] } } }`),
    ) as Record<string, any>;
    expect(json['version_policy']).toEqual({ specific: { versions: [2, 3] } });
    expect(json['instance_group'][0].secondary_devices).toEqual([{ kind: 'KIND_NVDLA', device_id: '7' }]);
    expect(json['optimization'].cuda.graph_spec[0].input).toEqual({ x: { dim: ['4'] } });
    expect(json['sequence_batching'].max_sequence_idle_microseconds).toBe(100);
    expect(json['sequence_batching'].oldest.max_queue_delay_microseconds).toBe(5);
    expect(json['sequence_batching'].state[0].dims).toEqual([2]);
    // Triton's fix-up misses these, so its endpoint leaves them as strings.
    expect(json['sequence_batching'].state[0].initial_state[0]).toEqual({ data_type: 'TYPE_INVALID', dims: ['2'], zero_data: true, name: '' });
    expect(modelConfigToJson({ ensemble_scheduling: { step: [{ model_version: -1 }] } })['ensemble_scheduling']).toEqual({
      step: [{ model_name: '', model_version: -1, input_map: {}, output_map: {}, model_namespace: '' }],
      max_inflight_requests: 0,
    });
    expect(json['model_warmup'][0].inputs.x.dims).toEqual([1]);
  });

  it('writes dynamic batching as Triton does, keys of the priority map as strings', () => {
    const json = modelConfigToJson(validateModelConfig(parseModelConfig(RICH_CONFIG))) as Record<string, any>;
    expect(json['dynamic_batching']).toEqual({
      preferred_batch_size: [4, 8],
      max_queue_delay_microseconds: 100,
      preserve_ordering: false,
      priority_levels: 2,
      default_priority_level: 1,
      default_queue_policy: { timeout_action: 'DELAY', default_timeout_microseconds: 16, allow_timeout_override: true, max_queue_size: 0 },
      priority_queue_policy: { '2': { timeout_action: 'REJECT', default_timeout_microseconds: 0, allow_timeout_override: false, max_queue_size: 8 } },
    });
  });

  it('spells non-finite floats as protobuf JSON does, and survives JSON.stringify', () => {
    const json = modelConfigToJson({ model_metrics: { metric_control: [{ histogram_options: { buckets: [NaN, Infinity, -Infinity, 0.5] } }] } });
    const text = JSON.stringify(json);
    expect(text).toContain('"buckets":["NaN","Infinity","-Infinity",0.5]');
    expect(JSON.parse(text)).toEqual(json);
  });

  it('writes 64-bit values beyond 2^53 with their exact digits where they stay strings', () => {
    const json = modelConfigToJson({ instance_group: [{ secondary_devices: [{ device_id: 2 ** 63 }] }] }) as Record<string, any>;
    expect(json['instance_group'][0].secondary_devices[0].device_id).toBe('9223372036854775807');
  });
});

const ORDER = [
  'name', 'platform', 'backend', 'runtime', 'version_policy', 'max_batch_size', 'input', 'output', 'batch_input', 'batch_output',
  'optimization', 'dynamic_batching', 'sequence_batching', 'ensemble_scheduling', 'instance_group', 'default_model_filename',
  'cc_model_filenames', 'metric_tags', 'parameters', 'model_warmup', 'model_operations', 'model_transaction_policy',
  'model_repository_agents', 'response_cache', 'model_metrics',
];
