import { describe, expect, it } from 'vitest';
import { modelConfigFromJson, modelConfigToJson, parseModelConfig } from '@tritium/core';
import { testConfig } from '../helpers/repository.js';
import { useServerFixture } from '../helpers/server-fixture.js';

const fx = useServerFixture();

/** Models whose configs hold what the JSON form writes in more than one way: 64-bit integers as strings, uint64 map keys, enums, oneofs. */
const MODELS = {
  batched: {
    config: testConfig({
      maxBatchSize: 8,
      extra: `dynamic_batching {
  max_queue_delay_microseconds: 100
  priority_levels: 2
  default_priority_level: 1
  default_queue_policy { timeout_action: DELAY default_timeout_microseconds: 2000 }
  priority_queue_policy { key: 1 value { max_queue_size: 4 } }
}`,
    }),
  },
  sequence: {
    config: testConfig({
      maxBatchSize: 2,
      extra: `sequence_batching {
  oldest { max_candidate_sequences: 4 }
  control_input { name: "START" control { kind: CONTROL_SEQUENCE_START fp32_false_true: [ 0, 1 ] } }
  control_input { name: "CORRID" control { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64 } }
  state { input_name: "STATE_IN" output_name: "STATE_OUT" data_type: TYPE_INT64 dims: [ 2 ]
    initial_state { data_type: TYPE_INT64 dims: [ 2 ] zero_data: true name: "zeros" } }
}`,
    }),
  },
  decoupled: { config: testConfig({ behavior: 'repeat', extra: 'model_transaction_policy { decoupled: true }' }) },
};

describe('modelConfigFromJson', () => {
  it("loads back what the model-config endpoint writes (int64s as strings, enums by name), config for config", async () => {
    const server = await fx.start(MODELS, { modelControlMode: 'explicit', startupModels: Object.keys(MODELS) });
    for (const name of Object.keys(MODELS)) {
      const before = await server.modelConfig(name);
      const written = JSON.stringify(modelConfigToJson(before));
      await server.loadModel(name, { config: modelConfigFromJson(written) });
      expect(await server.modelConfig(name), name).toEqual(before);
    }
  });

  it("reads protobuf's JSON forms: lowerCamelCase names, integers as strings, enums by number, null as a default", () => {
    const config = modelConfigFromJson(
      JSON.stringify({ maxBatchSize: '8', input: [{ name: 'IN', dataType: 11, dims: ['2', 3] }], dynamic_batching: { priority_queue_policy: { '1': { max_queue_size: 4 } } }, platform: null }),
    );
    expect(config).toEqual({
      max_batch_size: 8,
      input: [{ name: 'IN', data_type: 'TYPE_FP32', dims: [2, 3] }],
      dynamic_batching: { priority_queue_policy: { '1': { max_queue_size: 4 } } },
    });
  });

  it('takes back a uint64 maximum as the endpoint writes it: a JSON number, the double nearest it (2^64)', () => {
    const written = JSON.stringify(modelConfigToJson(parseModelConfig('dynamic_batching { priority_levels: 18446744073709551615 }')));
    expect(written).toContain('"priority_levels":18446744073709552000');
    expect(modelConfigFromJson(written).dynamic_batching?.priority_levels).toBe(2 ** 64);
  });

  it.each([
    ['{"input": [', /load parameter 'config' is not JSON/],
    ['[]', /config must be a JSON object, got an array/],
    ['{"constructor": 1}', /config has no field 'constructor'/],
    ['{"__proto__": {"name": "x"}}', /config has no field '__proto__'/],
    ['{"toString": "x"}', /config has no field 'toString'/],
    ['{"input": [{"hasOwnProperty": 1}]}', /config\.input\[0\] has no field 'hasOwnProperty'/],
    ['{"max_batch_size": "abc"}', /config\.max_batch_size must be an integer from -2147483648 to 2147483647 \(a number or a decimal string\), got the string "abc"/],
    ['{"max_batch_size": 2147483648}', /config\.max_batch_size must be an integer/],
    ['{"max_batch_size": 1.5}', /config\.max_batch_size must be an integer/],
    ['{"input": [{"data_type": "TYPE_NOPE"}]}', /config\.input\[0\]\.data_type must be one of TYPE_INVALID, TYPE_BOOL, .*, got the string "TYPE_NOPE"/],
    ['{"input": [{"data_type": 99}]}', /config\.input\[0\]\.data_type must be one of/],
    ['{"input": {"name": "IN"}}', /config\.input must be an array, got an object/],
    ['{"input": [{"dims": {"a": 1}}]}', /does not fit a ModelConfig: config\.input\[0\]\.dims must be an array, got an object/],
    ['{"name": 7}', /config\.name must be a string, got number 7/],
    ['{"dynamic_batching": {"priority_queue_policy": {"high": {}}}}', /config\.dynamic_batching\.priority_queue_policy key must be an integer from 0/],
    ['{"dynamic_batching": {}, "sequence_batching": {}}', /config sets both 'dynamic_batching' and 'sequence_batching', which are one choice/],
    ['{"max_batch_size": 1, "maxBatchSize": 2}', /config\.max_batch_size is given twice/],
  ])('refuses %s with INVALID_ARG naming the field', (text, message) => {
    expect(() => modelConfigFromJson(text)).toThrow(expect.objectContaining({ code: 'INVALID_ARG', message: expect.stringMatching(message) }));
  });

  it('refuses values nested deeper than the message without walking them', () => {
    const deep = `${'['.repeat(100_000)}1${']'.repeat(100_000)}`;
    expect(() => modelConfigFromJson(`{"input": [{"dims": ${deep}}]}`)).toThrow(/config\.input\[0\]\.dims\[0\] must be an integer .*, got an array/);
  });
});
