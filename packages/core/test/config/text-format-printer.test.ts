import { describe, expect, it } from 'vitest';
import { normalizeModelConfig, parseModelConfig, printModelConfig, type ModelConfig } from '../../src/config/index.js';
import { RICH_CONFIG, invalidArgMessage } from './helpers.js';

const roundTrip = (config: ModelConfig) => parseModelConfig(printModelConfig(config), 'printed');

describe('text format printer', () => {
  it('prints fields in proto order, lists inline and messages as blocks', () => {
    const config = parseModelConfig('max_batch_size: 4 name: "m" input [{ name: "x" dims: [2, -1] data_type: TYPE_FP32 reshape: {} }] parameters { key: "k" value { string_value: "v" } }');
    expect(printModelConfig(config)).toBe(
      [
        'name: "m"',
        'max_batch_size: 4',
        'input {',
        '  name: "x"',
        '  data_type: TYPE_FP32',
        '  dims: [2, -1]',
        '  reshape {}',
        '}',
        'parameters {',
        '  key: "k"',
        '  value {',
        '    string_value: "v"',
        '  }',
        '}',
        '',
      ].join('\n'),
    );
  });

  it('round-trips a config with most features', () => {
    const config = parseModelConfig(RICH_CONFIG);
    expect(roundTrip(config)).toEqual(config);
  });

  it('round-trips a normalized config', () => {
    const normalized = normalizeModelConfig(parseModelConfig(RICH_CONFIG));
    expect(roundTrip(normalized)).toEqual(normalized);
  });

  it('round-trips strings with quotes, escapes, control characters and non-ASCII text', () => {
    const name = 'a"b\\c\nd\te\r\u0000\u0007\u001f\u007f é 😀 \'q\'';
    expect(printModelConfig({ name })).toBe(`name: "a\\"b\\\\c\\nd\\te\\r\\000\\007\\037\\177 é 😀 'q'"\n`);
    expect(roundTrip({ name })).toEqual({ name });
  });

  it('round-trips special numbers: nan, infinities, -0, 64-bit extremes', () => {
    const config: ModelConfig = {
      input: [{ dims: [-(2 ** 63), 2 ** 63, 0] }],
      dynamic_batching: { priority_levels: 2 ** 64, max_queue_delay_microseconds: Number.MAX_SAFE_INTEGER },
      model_metrics: { metric_control: [{ histogram_options: { buckets: [NaN, Infinity, -Infinity, -0, 1e-300, 1.5e300] } }] },
    };
    const text = printModelConfig(config);
    expect(text).toContain('dims: [-9223372036854775808, 9223372036854775807, 0]');
    expect(text).toContain('priority_levels: 18446744073709551615');
    expect(text).toContain('buckets: [nan, inf, -inf, -0, 1e-300, 1.5e+300]');
    expect(roundTrip(config)).toEqual(config);
  });

  it('keeps empty lists and maps, and uint64 map keys as numbers', () => {
    const config: ModelConfig = { input: [], output: [{ dims: [] }], parameters: {}, dynamic_batching: { priority_queue_policy: { '7': {} } } };
    const text = printModelConfig(config);
    expect(text).toContain('input: []\n');
    expect(text).toContain('parameters: []\n');
    expect(text).toContain('key: 7\n');
    expect(roundTrip(config)).toEqual(config);
  });

  it('refuses objects that are not configs', () => {
    expect(invalidArgMessage(() => printModelConfig({ dimz: 1 } as ModelConfig))).toContain("unknown field 'dimz'");
    expect(invalidArgMessage(() => printModelConfig({ input: [{ dims: [1.5] }] }))).toContain("'input[0].dims[0]': 1.5 is not an integer");
    expect(invalidArgMessage(() => printModelConfig({ input: [{ data_type: 'FP32' as 'TYPE_FP32' }] }))).toContain('is not one of TYPE_INVALID');
    expect(invalidArgMessage(() => printModelConfig({ input: {} as [] }))).toContain("'input': a repeated field needs an array");
    expect(invalidArgMessage(() => printModelConfig({ version_policy: 'latest' as {} }))).toContain("'version_policy': a message needs an object");
  });
});
