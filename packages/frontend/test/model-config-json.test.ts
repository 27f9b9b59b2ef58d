import { describe, expect, it } from 'vitest';
import { modelConfigToJson } from '@tritium/core';
import { useServerFixture } from '../../core/test/helpers/server-fixture.js';
import { modelConfigFromJson } from '../src/model-config-json.js';
import { accumulateModel, classifierModel, repeatModel } from './helpers/http-models.js';

const fx = useServerFixture();

describe('modelConfigFromJson', () => {
  it("loads back what the model-config endpoint writes (int64s as strings, enums by name), config for config", async () => {
    const models = { acc: accumulateModel, classifier: classifierModel, repeat: repeatModel };
    const server = await fx.start(models, { modelControlMode: 'explicit', startupModels: Object.keys(models) });
    for (const name of Object.keys(models)) {
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
