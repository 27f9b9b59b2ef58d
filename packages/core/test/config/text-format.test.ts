import { describe, expect, it } from 'vitest';
import type { FieldDescriptor } from '../../src/config/descriptor.js';
import { parseModelConfig } from '../../src/config/index.js';
import { parseTextFormat } from '../../src/config/text-format.js';
import { RICH_CONFIG, fuzzParser, invalidArgMessage } from './helpers.js';

describe('text format: structure', () => {
  it('skips # comments and whitespace', () => {
    expect(parseModelConfig('# header\nname: "m" # trailing\n\n\t# another\nmax_batch_size: 4#x\n')).toEqual({ name: 'm', max_batch_size: 4 });
  });

  it('parses nested messages with or without a colon, and with <...> braces', () => {
    const expected = { version_policy: { latest: { num_versions: 2 } } };
    expect(parseModelConfig('version_policy { latest { num_versions: 2 } }')).toEqual(expected);
    expect(parseModelConfig('version_policy: { latest: { num_versions: 2 } }')).toEqual(expected);
    expect(parseModelConfig('version_policy < latest < num_versions: 2 > >')).toEqual(expected);
    expect(parseModelConfig('version_policy: { all {} }')).toEqual({ version_policy: { all: {} } });
  });

  it('makes repeated fields arrays: lists, repeated keys, and a single occurrence', () => {
    expect(parseModelConfig('input { name: "a" dims: 4 }').input).toEqual([{ name: 'a', dims: [4] }]);
    expect(parseModelConfig('input [ { name: "a" }, { name: "b" } ] input { name: "c" }').input).toEqual([{ name: 'a' }, { name: 'b' }, { name: 'c' }]);
    expect(parseModelConfig('input: [{ dims: [1, 2] dims: 3 dims: [] }]').input).toEqual([{ dims: [1, 2, 3] }]);
    expect(parseModelConfig('input [] output: []')).toEqual({ input: [], output: [] });
    expect(parseModelConfig('input { reshape { shape: [] } }').input).toEqual([{ reshape: { shape: [] } }]);
  });

  it('accepts , and ; as optional separators', () => {
    expect(parseModelConfig('name: "m", max_batch_size: 2; backend: "python";')).toEqual({ name: 'm', max_batch_size: 2, backend: 'python' });
    expect(parseModelConfig('input [{ name: "a"; dims: [1]; }, { name: "b", }]').input).toEqual([{ name: 'a', dims: [1] }, { name: 'b' }]);
  });

  it('parses enums as their names, also when written as numbers', () => {
    const config = parseModelConfig('input { data_type: TYPE_FP32 format: 2 } instance_group { kind: KIND_CPU }');
    expect(config.input?.[0]).toEqual({ data_type: 'TYPE_FP32', format: 'FORMAT_NCHW' });
    expect(config.instance_group?.[0]?.kind).toBe('KIND_CPU');
  });

  it('parses maps into plain objects, later entries winning, missing parts defaulted', () => {
    const config = parseModelConfig(`
      parameters { key: "a" value: { string_value: "1" } }
      parameters: [ { key: "b" value { string_value: "2" } }, { key: "a" value: { string_value: "3" } } ]
      parameters { key: "empty" }
      metric_tags { key: "k" value: "v" }
      cc_model_filenames { value: "no-key.plan" }
      dynamic_batching { priority_queue_policy { key: 2 value: { max_queue_size: 5 } } priority_queue_policy { key: 0x3 } }
      model_warmup { inputs { key: "IN" value: { dims: [2] random_data: true } } }
    `);
    expect(config.parameters).toEqual({ a: { string_value: '3' }, b: { string_value: '2' }, empty: {} });
    expect(config.metric_tags).toEqual({ k: 'v' });
    expect(config.cc_model_filenames).toEqual({ '': 'no-key.plan' });
    const step = parseModelConfig('ensemble_scheduling { step { model_name: "s" input_map { key: "IN" value: "x" } output_map { key: "OUT" value: "y" } } }')
      .ensemble_scheduling?.step?.[0];
    expect(step).toEqual({ model_name: 's', input_map: { IN: 'x' }, output_map: { OUT: 'y' } });
    expect(config.dynamic_batching?.priority_queue_policy).toEqual({ '2': { max_queue_size: 5 }, '3': {} });
    expect(config.model_warmup?.[0]?.inputs).toEqual({ IN: { dims: [2], random_data: true } });
  });

  it('keeps a "__proto__" map key as an ordinary entry', () => {
    const tags = parseModelConfig('metric_tags { key: "__proto__" value: "x" }').metric_tags!;
    expect(Object.keys(tags)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(tags)).toBe(Object.prototype);
  });

  it('parses a config with most features', () => {
    const config = parseModelConfig(RICH_CONFIG);
    expect(config.input?.[1]).toEqual({ name: 'INPUT1', data_type: 'TYPE_STRING', dims: [1], reshape: { shape: [] }, optional: true });
    expect(config.output).toEqual([{ name: 'OUTPUT0', data_type: 'TYPE_INT64', dims: [16], label_filename: 'labels.txt' }]);
    expect(config.instance_group).toEqual([{ name: 'cpus', kind: 'KIND_CPU', count: 2 }, { kind: 'KIND_MODEL' }]);
    expect(config.dynamic_batching?.default_queue_policy).toEqual({ timeout_action: 'DELAY', default_timeout_microseconds: 16, allow_timeout_override: true });
    expect(config.dynamic_batching?.priority_queue_policy).toEqual({ '2': { max_queue_size: 8 } });
    expect(config.optimization?.execution_accelerators?.cpu_execution_accelerator).toEqual([{ name: 'openvino', parameters: { precision: 'FP16' } }]);
    expect(config.parameters?.['escaped']).toEqual({ string_value: 'tab\there "quoted" é é and more' });
    expect(config.model_metrics?.metric_control?.[0]?.histogram_options?.buckets).toEqual([0.5, 0.001, 2, 10]);
  });
});

describe('text format: scalars', () => {
  const stringValue = (literal: string) => parseModelConfig(`name: ${literal}`).name;
  const intValue = (literal: string) => parseModelConfig(`max_batch_size: ${literal}`).max_batch_size;
  const floats = (literals: string) => parseModelConfig(`model_metrics { metric_control { histogram_options { buckets: [${literals}] } } }`).model_metrics?.metric_control?.[0]?.histogram_options?.buckets;
  const bool = (literal: string) => parseModelConfig(`response_cache { enable: ${literal} }`).response_cache?.enable;

  it('parses single- and double-quoted strings with every escape', () => {
    expect(stringValue(`'it\\'s'`)).toBe("it's");
    expect(stringValue(`"say \\"hi\\""`)).toBe('say "hi"');
    expect(stringValue(`"a\\nb\\tc\\\\d\\re\\a\\b\\f\\v\\?"`)).toBe('a\nb\tc\\d\re\x07\b\f\v?');
    expect(stringValue(`"\\x41\\x4a\\101\\0\\12"`)).toBe('AJA\0\n');
    expect(stringValue(`"\\u00e9\\U0001F600\\ud83d\\ude00"`)).toBe('é😀😀');
    expect(stringValue(`"\\xc3\\xa9"`)).toBe('é');
    expect(stringValue(`"naïve ✓"`)).toBe('naïve ✓');
    expect(stringValue(`""`)).toBe('');
  });

  it('concatenates adjacent string literals', () => {
    expect(stringValue(`"a" 'b'\n  "c"`)).toBe('abc');
    expect(stringValue(`"\\xc3" "\\xa9"`)).toBe('é');
  });

  it('parses negative, hex and octal integers', () => {
    expect(intValue('-2')).toBe(-2);
    expect(intValue('- 2')).toBe(-2);
    expect(intValue('0x1F')).toBe(31);
    expect(intValue('0X1f')).toBe(31);
    expect(intValue('017')).toBe(15);
    expect(intValue('0')).toBe(0);
    expect(intValue('2147483647')).toBe(2147483647);
    expect(intValue('-2147483648')).toBe(-2147483648);
  });

  it('holds int64 and uint64 as JS numbers', () => {
    const config = parseModelConfig('input { dims: [-1, 9007199254740991] } dynamic_batching { priority_levels: 18446744073709551615 }');
    expect(config.input?.[0]?.dims).toEqual([-1, Number.MAX_SAFE_INTEGER]);
    expect(config.dynamic_batching?.priority_levels).toBe(2 ** 64);
  });

  it('parses floats: decimals, exponents, leading dot, f suffix, integers, inf and nan', () => {
    expect(floats('1.5, 1e-3, .5, 1.0f, 2F, 3, -4, 0x10, 1E+2, 5.')).toEqual([1.5, 0.001, 0.5, 1, 2, 3, -4, 16, 100, 5]);
    expect(floats('inf, -inf, Infinity, -INF')).toEqual([Infinity, -Infinity, Infinity, -Infinity]);
    expect(floats('nan, NaN')).toEqual([NaN, NaN]);
    expect(parseModelConfig('sequence_batching { direct { minimum_slot_utilization: 0.25 } }').sequence_batching?.direct?.minimum_slot_utilization).toBe(0.25);
  });

  it('parses booleans in every spelling protobuf accepts', () => {
    for (const literal of ['true', 'True', 't', '1']) expect(bool(literal)).toBe(true);
    for (const literal of ['false', 'False', 'f', '0']) expect(bool(literal)).toBe(false);
  });

  it('strips a leading byte-order mark', () => {
    expect(parseModelConfig('\uFEFFname: "m"')).toEqual({ name: 'm' });
  });
});

describe('text format: errors', () => {
  it('names an unknown field with its path and position', () => {
    const message = invalidArgMessage(() => parseModelConfig('name: "m"\ninput [\n  {\n    name: "a"\n    dimz: [ 1 ]\n  }\n]', 'models/m/config.pbtxt'));
    expect(message).toContain('input[0].dimz');
    expect(message).toContain('models/m/config.pbtxt:5:5');
  });

  it('reports the line and column without a source', () => {
    expect(invalidArgMessage(() => parseModelConfig('\n  bogus: 1'))).toMatch(/^line 2:3: unknown field 'bogus'/);
  });

  const cases: [string, string, RegExp][] = [
    ['a missing colon before a scalar', 'name "m"', /1:6: expected ':' after 'name'/],
    ['a list on a non-repeated field', 'name: ["a"]', /'name' is not a repeated field/],
    ['a field set twice', 'name: "a"\nname: "b"', /2:1: 'name' is set more than once/],
    ['a message set twice', 'input { reshape {} reshape {} }', /'input\[0\]\.reshape' is set more than once/],
    ['two members of a oneof', 'version_policy { latest {} all {} }', /'version_policy\.all' cannot be set along with 'latest'/],
    ['two scheduling choices', 'dynamic_batching {}\nsequence_batching {}', /2:1: 'sequence_batching' cannot be set along with 'dynamic_batching'/],
    ['a string for an integer', 'max_batch_size: "8"', /expected an integer for 'max_batch_size', got the string "8"/],
    ['a float for an integer', 'max_batch_size: 1.5', /expected an integer for 'max_batch_size', got '1\.5'/],
    ['an integer out of int32 range', 'max_batch_size: 2147483648', /2147483648 is out of range for 'max_batch_size' \(int32\)/],
    ['a negative unsigned', 'version_policy { latest { num_versions: -1 } }', /-1 is out of range for 'version_policy\.latest\.num_versions' \(uint32\)/],
    ['a huge integer', `input { dims: [ ${'9'.repeat(400)} ] }`, /out of range for 'input\[0\]\.dims\[0\]' \(int64\)/],
    ['a value beyond uint64', 'dynamic_batching { priority_levels: 18446744073709551616 }', /out of range/],
    ['an unknown enum value', 'input { data_type: TYPE_FLOAT32 }', /'TYPE_FLOAT32' is not a value of 'input\[0\]\.data_type'; expected one of TYPE_INVALID/],
    ['an enum number out of range', 'input { format: 3 }', /'3' is not a value of 'input\[0\]\.format'/],
    ['a bare word for a string', 'name: model', /expected a quoted string for 'name', got 'model'/],
    ['a number for a bool', 'response_cache { enable: 2 }', /expected true or false for 'response_cache\.enable'/],
    ['an invalid escape', 'name: "a\\qb"', /1:9: invalid escape sequence '\\q'/],
    ['a short \\u escape', 'name: "\\u12"', /needs exactly 4 hex digits/],
    ['a \\x escape without digits', 'name: "\\xg"', /needs hex digits/],
    ['an octal escape above 255', 'name: "\\777"', /above \\377/],
    ['a lone surrogate', 'name: "\\ud800"', /high surrogate/],
    ['invalid UTF-8 bytes', 'name: "\\xff"', /not valid UTF-8/],
    ['an unterminated string', 'name: "abc\nplatform: "x"', /1:7: unterminated string/],
    ['an unterminated string at the end', 'name: "abc', /unterminated string/],
    ['an unclosed brace', 'input {\n  name: "a"\n', /3:1: unexpected end of input: '\{' at line 1:7 is never closed/],
    ['an extra closing brace', 'name: "a" }', /expected a field name, got '\}'/],
    ['a mismatched closing brace', 'input < name: "a" }', /expected a field name or '>' in input\[0\], got '\}'/],
    ['an unclosed list', 'input { dims: [1, 2 }', /expected ',' or '\]' in the list 'input\[0\]\.dims', got '\}'/],
    ['a truncated field', 'max_batch_size:', /expected an integer for 'max_batch_size', got the end of the input/],
    ['a value without a field', '"orphan"', /expected a field name, got the string "orphan"/],
    ['extension syntax', '[ext.field]: 1', /extension and Any fields/],
    ['a number glued to a word', 'max_batch_size: 8x', /a space must separate a number/],
    ['a bad octal literal', 'max_batch_size: 09', /'09' is not a valid octal number/],
    ['an empty hex literal', 'max_batch_size: 0x', /hex digits expected/],
    ['an exponent without digits', 'model_metrics { metric_control { histogram_options { buckets: 1e } } }', /exponent digits expected/],
    ['binary garbage', 'name: "m"\n\u0000\u0001\u00ff', /2:1: unexpected character "\\u0000" \(U\+0000\)/],
    ['an unexpected symbol', 'name: "m" @', /unexpected character "@"/],
    ['a message value for a scalar', 'name { }', /expected ':' after 'name'/],
    ['a scalar for a message', 'version_policy: 1', /expected '\{' to open 'version_policy', got '1'/],
  ];
  for (const [what, text, pattern] of cases) {
    it(`refuses ${what}`, () => {
      expect(invalidArgMessage(() => parseModelConfig(text))).toMatch(pattern);
    });
  }

  it('refuses deep nesting without a stack overflow', () => {
    const deep = `input ${'{ reshape '.repeat(100_000)}`;
    expect(invalidArgMessage(() => parseModelConfig(deep))).toMatch(/expected ':' after|unknown field|expected a field name/);
    const brackets = 'input: '.concat('['.repeat(100_000));
    expect(invalidArgMessage(() => parseModelConfig(brackets))).toMatch(/expected '\{'/);
  });

  it('caps message nesting depth', () => {
    // ModelConfig nests only a few levels, so the cap is shown on a self-recursive message.
    const node: { fields: Map<string, FieldDescriptor> } = { fields: new Map() };
    node.fields.set('child', { name: 'child', value: { kind: 'message', message: node }, repeated: false });
    expect(parseTextFormat('child { child { } }', node)).toEqual({ child: { child: {} } });
    const message = invalidArgMessage(() => parseTextFormat('child {'.repeat(100_000), node));
    expect(message).toMatch(/line 1:231: 'child(\.child){32}' nests messages deeper than 32 levels/);
  });

  it('handles large inputs in linear time', () => {
    const big = `name: "${'x'.repeat(2_000_000)}"\n${'input { name: "a" dims: [1, 2, 3] }\n'.repeat(20_000)}`;
    const started = performance.now();
    const config = parseModelConfig(big);
    expect(config.input).toHaveLength(20_000);
    expect(config.name).toHaveLength(2_000_000);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

describe('text format: fuzzing', () => {
  it('never throws anything but a positioned InferenceError on mutated configs', () => {
    const { runs, refused } = fuzzParser([RICH_CONFIG], { seed: 20240601, maxRuns: 5_000, millis: 3_000 });
    expect(runs).toBeGreaterThan(1_000);
    expect(refused).toBeGreaterThan(0);
  });
});
