import { describe, expect, it } from 'vitest';
import { normalizeModelConfig, parseModelConfig, type ModelConfig } from '../../src/config/index.js';
import { RICH_CONFIG, invalidArgMessage } from './helpers.js';

const normalize = (text: string) => normalizeModelConfig(parseModelConfig(text));

describe('normalizeModelConfig', () => {
  it('fills the proto3 defaults of every present message', () => {
    const config = normalize('name: "m" backend: "python" input { name: "x" }');
    expect(config.max_batch_size).toBe(0);
    expect(config.runtime).toBe('');
    expect(config.input[0]).toEqual({
      name: 'x',
      data_type: 'TYPE_INVALID',
      format: 'FORMAT_NONE',
      dims: [],
      is_shape_tensor: false,
      allow_ragged_batch: false,
      optional: false,
      is_non_linear_format_io: false,
    });
    expect(config.output).toEqual([]);
    expect(config.parameters).toEqual({});
    expect(config.model_transaction_policy).toEqual({ decoupled: false });
    expect(config.response_cache).toEqual({ enable: false });
    // Messages whose presence matters stay absent.
    expect(config.dynamic_batching).toBeUndefined();
    expect(config.sequence_batching).toBeUndefined();
    expect(config.model_metrics).toBeUndefined();
  });

  it('defaults the version policy to the latest version', () => {
    expect(normalize('name: "m"').version_policy).toEqual({ latest: { num_versions: 1 } });
    expect(normalize('name: "m" version_policy { all {} }').version_policy).toEqual({ all: {} });
    expect(normalize('name: "m" version_policy { latest {} }').version_policy).toEqual({ latest: { num_versions: 0 } });
  });

  describe('backend fields', () => {
    const fields = (text: string) => {
      const { backend, platform, default_model_filename } = normalize(text);
      return { backend, platform, default_model_filename };
    };
    it('fills them from the platform, the backend or the model file name', () => {
      expect(fields('name: "m" platform: "onnxruntime_onnx"')).toEqual({ backend: 'onnxruntime', platform: 'onnxruntime_onnx', default_model_filename: 'model.onnx' });
      expect(fields('name: "m" backend: "onnxruntime"')).toEqual({ backend: 'onnxruntime', platform: 'onnxruntime_onnx', default_model_filename: 'model.onnx' });
      expect(fields('name: "m" platform: "tensorrt_plan"')).toEqual({ backend: 'tensorrt', platform: 'tensorrt_plan', default_model_filename: 'model.plan' });
      expect(fields('name: "m" platform: "tensorflow_savedmodel"')).toEqual({ backend: 'tensorflow', platform: 'tensorflow_savedmodel', default_model_filename: 'model.savedmodel' });
      expect(fields('name: "m" backend: "pytorch"')).toEqual({ backend: 'pytorch', platform: 'pytorch_libtorch', default_model_filename: 'model.pt' });
      expect(fields('name: "m" default_model_filename: "model.pt2"')).toEqual({ backend: 'pytorch', platform: 'torch_aoti', default_model_filename: 'model.pt2' });
      expect(fields('name: "m" backend: "python"')).toEqual({ backend: 'python', platform: '', default_model_filename: 'model.py' });
      expect(fields('name: "m" default_model_filename: "model.xml"')).toEqual({ backend: 'openvino', platform: '', default_model_filename: 'model.xml' });
      expect(fields('name: "m" backend: "onnxruntime" default_model_filename: "custom.onnx"')).toEqual({ backend: 'onnxruntime', platform: 'onnxruntime_onnx', default_model_filename: 'custom.onnx' });
    });
    it('takes a custom backend from a model named <name>.<backend>', () => {
      expect(fields('name: "add.identity"')).toEqual({ backend: 'identity', platform: '', default_model_filename: 'model.identity' });
    });
    it('leaves them alone where the files would have to decide, or where they disagree', () => {
      expect(fields('name: "m"')).toEqual({ backend: '', platform: '', default_model_filename: '' });
      expect(fields('name: "m" backend: "tensorflow"')).toEqual({ backend: 'tensorflow', platform: '', default_model_filename: '' });
      expect(fields('name: "m" platform: "ensemble"')).toEqual({ backend: '', platform: 'ensemble', default_model_filename: '' });
      expect(fields('name: "m" platform: "onnxruntime_onnx" backend: "tensorrt"')).toEqual({ backend: 'tensorrt', platform: 'onnxruntime_onnx', default_model_filename: '' });
      expect(fields('name: "m" backend: "my_backend"')).toEqual({ backend: 'my_backend', platform: '', default_model_filename: '' });
    });
  });

  describe('instance groups', () => {
    it('adds one CPU group named after the model, with Triton default counts', () => {
      expect(normalize('name: "m" backend: "python"').instance_group).toEqual([
        { name: 'm', kind: 'KIND_CPU', count: 1, gpus: [], secondary_devices: [], profile: [], passive: false, host_policy: '' },
      ]);
      // Triton gives ONNX Runtime and TensorFlow two CPU instances by default.
      expect(normalize('name: "m" platform: "onnxruntime_onnx"').instance_group[0]).toMatchObject({ name: 'm', kind: 'KIND_CPU', count: 2 });
    });

    it('names unnamed groups <model>_<index> and fills counts', () => {
      const groups = normalize(`name: "m" backend: "python"
        instance_group [ { count: 3 }, { name: "mine" kind: KIND_MODEL }, { kind: KIND_CPU count: -4 } ]`).instance_group;
      expect(groups.map(({ name, kind, count }) => ({ name, kind, count }))).toEqual([
        { name: 'm_0', kind: 'KIND_CPU', count: 3 },
        { name: 'mine', kind: 'KIND_MODEL', count: 1 },
        { name: 'm_2', kind: 'KIND_CPU', count: 1 },
      ]);
    });

    it('resolves KIND_AUTO to KIND_CPU without GPUs, and leaves KIND_GPU for validation', () => {
      const groups = normalize('name: "m" instance_group { gpus: [0, 1] } instance_group { kind: KIND_GPU gpus: 2 }').instance_group;
      expect(groups[0]).toMatchObject({ kind: 'KIND_CPU', gpus: [] });
      expect(groups[1]).toMatchObject({ kind: 'KIND_GPU', gpus: [2] });
    });
  });

  it('fills dynamic batching defaults', () => {
    expect(normalize('name: "m" max_batch_size: 16 dynamic_batching {}').dynamic_batching).toEqual({
      preferred_batch_size: [16],
      max_queue_delay_microseconds: 0,
      preserve_ordering: false,
      priority_levels: 0,
      default_priority_level: 0,
      default_queue_policy: { timeout_action: 'REJECT', default_timeout_microseconds: 0, allow_timeout_override: false, max_queue_size: 0 },
      priority_queue_policy: {},
    });
    expect(normalize('name: "m" dynamic_batching {}').dynamic_batching?.preferred_batch_size).toEqual([]);
    expect(normalize('name: "m" max_batch_size: 16 dynamic_batching { preferred_batch_size: 4 }').dynamic_batching?.preferred_batch_size).toEqual([4]);
  });

  it('fills sequence batching defaults', () => {
    const sequence = normalize('name: "m" max_batch_size: 4 sequence_batching { oldest {} }').sequence_batching;
    expect(sequence?.max_sequence_idle_microseconds).toBe(1_000_000);
    expect(sequence?.oldest).toEqual({ max_candidate_sequences: 0, preferred_batch_size: [4], max_queue_delay_microseconds: 0, preserve_ordering: false });
    expect(sequence?.direct).toBeUndefined();
    expect(normalize('name: "m" sequence_batching { max_sequence_idle_microseconds: 5 }').sequence_batching?.max_sequence_idle_microseconds).toBe(5);
  });

  it('enables pinned memory unless set, and gives ensembles no optimization or instances', () => {
    expect(normalize('name: "m"').optimization).toEqual({
      priority: 'PRIORITY_DEFAULT',
      input_pinned_memory: { enable: true },
      output_pinned_memory: { enable: true },
      gather_kernel_buffer_threshold: 0,
      eager_batching: false,
    });
    expect(normalize('name: "m" optimization { input_pinned_memory { enable: false } }').optimization).toMatchObject({
      input_pinned_memory: { enable: false },
      output_pinned_memory: { enable: true },
    });
    const ensemble = normalize('name: "e" platform: "ensemble" ensemble_scheduling { step { model_name: "a" } }');
    expect(ensemble.optimization).toBeUndefined();
    expect(ensemble.instance_group).toEqual([]);
  });

  it('returns a copy, and normalizing twice changes nothing', () => {
    const config = parseModelConfig(RICH_CONFIG);
    const before = structuredClone(config);
    const once = normalizeModelConfig(config);
    expect(config).toEqual(before);
    expect(normalizeModelConfig(once)).toEqual(once);
  });

  it('refuses objects that do not match the schema, naming the field', () => {
    expect(invalidArgMessage(() => normalizeModelConfig({ name: 'm', max_batch_size: '8' } as unknown as ModelConfig))).toMatch(/^model 'm': invalid configuration: max_batch_size: /);
    expect(invalidArgMessage(() => normalizeModelConfig({ name: 'm', input: [{ dimz: [1] }] } as unknown as ModelConfig))).toMatch(/input\[0\]: .*dimz/);
    expect(invalidArgMessage(() => normalizeModelConfig({ name: 'm', max_batch_size: 2 ** 31 }))).toMatch(/max_batch_size: /);
    expect(invalidArgMessage(() => normalizeModelConfig({ name: 'm', input: [{ dims: [1.5] }] }))).toMatch(/input\[0\]\.dims\[0\]: expected an integer/);
    expect(invalidArgMessage(() => normalizeModelConfig({ name: 'm', dynamic_batching: {}, sequence_batching: {} }))).toMatch(/only one of dynamic_batching, sequence_batching may be set/);
    expect(invalidArgMessage(() => normalizeModelConfig(null as unknown as ModelConfig))).toMatch(/^model '': invalid configuration: config: /);
  });
});
