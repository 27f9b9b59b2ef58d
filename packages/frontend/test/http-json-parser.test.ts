import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { countingTurns } from '../../core/test/helpers/loop-turns.js';
import { FlatTensorValues } from '../src/http/flat-tensor-values.js';
import { JSON_SLICE_BYTES, JsonParseError, MAX_JSON_DEPTH, MAX_JSON_VALUES_OUTSIDE_TENSORS, parseJson } from '../src/http/json-parser.js';

const parse = (text: string, isTensorData?: (key: string) => boolean) => parseJson(Buffer.from(text), { isTensorData });
const nested = (depth: number, leaf: string) => `${'['.repeat(depth)}${leaf}${']'.repeat(depth)}`;

describe('parseJson', () => {
  it('reads what JSON.parse reads, numbers rounded alike', async () => {
    const texts = [
      '{"a": [1, -2.5, 1e22, 1e23, 5e-324, 1.7976931348623157e308, -0, 0.1, 123456789012345678e-5], "b": {"c": [true, false, null, {}]}}',
      '"tab\\t quote\\" slash\\/ \\u00e9 \\ud83d\\ude00 é 😀"',
      ' [ "x" , [ ] , { } ] ',
      '9007199254740991',
    ];
    for (let i = 0; i < 2000; i++) {
      const x = (Math.random() - 0.5) * 10 ** Math.floor(Math.random() * 40 - 20);
      const text = [x.toString(), x.toFixed(5), x.toPrecision(7), x.toExponential(3)][i % 4]!;
      // An integer beyond 2^53 is read as a bigint, below.
      if (!/^-?\d+$/.test(text) || Number.isSafeInteger(Number(text))) texts.push(text);
    }
    for (const text of texts) expect(await parse(text), text).toEqual(JSON.parse(text));
  });

  it('reads an integer beyond 2^53 exactly, as a bigint', async () => {
    expect(await parse('[9007199254740992, 9007199254740993, 18446744073709551615, -9223372036854775808, 1e300]')).toEqual([
      9007199254740992n,
      9007199254740993n,
      18446744073709551615n,
      -9223372036854775808n,
      1e300,
    ]);
  });

  it('reads an integer of more than 20 digits (beyond any uint64) as the double JSON.parse makes, not a bigint', async () => {
    // BigInt's parse of a body's worth of digits would hold the event loop for seconds.
    for (const text of ['123456789012345678901', `-${'9'.repeat(1_000_000)}`, `[${'1'.repeat(400)}]`]) {
      expect(await parse(text)).toEqual(JSON.parse(text));
    }
  });

  it('makes a member named __proto__ an own member, touching no prototype', async () => {
    const value = (await parse('{"__proto__": {"polluted": 1}, "a": 2}')) as Record<string, unknown>;
    expect(Object.keys(value)).toEqual(['__proto__', 'a']);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each(['', '01', '1.', '.5', '+1', '[1,]', '{"a":1,}', '"\u0001"', '[1 2]', 'tru', '{"a" 1}', '"abc', '1 2', '-', '1e', 'NaN', '"\\x"', '{1: 2}'])(
    'refuses %j, saying where',
    async (text) => {
      expect(() => JSON.parse(text)).toThrow();
      await expect(parse(text)).rejects.toThrow(expect.objectContaining({ constructor: JsonParseError, message: expect.stringMatching(/ at byte \d+$/) }));
    },
  );

  it('flattens tensor data as read, and refuses a value inside 100 of its arrays, as Triton does', async () => {
    const tensor = (await parse(`{"data": [[1, [2, 3]], [4], []], "shape": [[5]]}`, (key) => key === 'data')) as { data: FlatTensorValues; shape: unknown };
    expect(tensor.data).toBeInstanceOf(FlatTensorValues);
    expect(tensor.data.toArray()).toEqual([1, 2, 3, 4]);
    expect(tensor.shape).toEqual([[5]]);
    const deepest = (await parse(`{"data": ${nested(MAX_JSON_DEPTH - 1, '7')}}`, (key) => key === 'data')) as { data: FlatTensorValues };
    expect(tensor.data.length).toBe(4);
    expect(deepest.data.toArray()).toEqual([7]);
    await expect(parse(`{"data": ${nested(MAX_JSON_DEPTH, '7')}}`, (key) => key === 'data')).rejects.toThrow(
      `JSON nesting depth exceeds maximum allowed limit (100) at byte ${10 + MAX_JSON_DEPTH - 1}`,
    );
  });

  it('counts the arrays of an object inside tensor data as other nesting, not as new tensor data', async () => {
    const cycle = `{"data": ${'['.repeat(50)}`;
    const text = `${cycle.repeat(3)}1${`${']'.repeat(50)}}`.repeat(3)}`;
    await expect(parse(text, (key) => key === 'data')).rejects.toThrow('JSON nesting depth exceeds maximum allowed limit (100)');
    const inner = (await parse('{"data": [{"data": [[1]]}]}', (key) => key === 'data')) as { data: FlatTensorValues };
    expect(inner.data.toArray()).toEqual([{ data: [[1]] }]);
  });

  it('refuses any other nesting past 100 objects and arrays as soon as it is met', async () => {
    expect(await parse(nested(MAX_JSON_DEPTH, '1'))).toBeDefined();
    await expect(parse(nested(MAX_JSON_DEPTH + 1, '1'))).rejects.toThrow('JSON nesting depth exceeds maximum allowed limit (100) at byte 100');
    await expect(parse(`${'{"a":'.repeat(1_000_000)}`)).rejects.toThrow('JSON nesting depth exceeds maximum allowed limit (100) at byte 500');
  });

  it('refuses more values outside tensor data than a request could need, before making them all', async () => {
    const limit = MAX_JSON_VALUES_OUTSIDE_TENSORS;
    const many = (count: number, value: string) => `{"inputs":[${Array.from({ length: count }, () => value).join(',')}]}`;
    // The array's members and the array, the inputs member and the document: limit - 1 members fit.
    await expect(parse(many(limit - 2, '{}'))).resolves.toMatchObject({ inputs: { length: limit - 2 } });
    await expect(parse(many(limit, '{}'))).rejects.toThrow(`the JSON holds more than ${limit} values outside tensor data`);
    await expect(parse(`{"shape":[${'1,'.repeat(limit)}1]}`)).rejects.toThrow(JsonParseError);
    // Tensor elements are not counted (their shape bounds them); objects among them are.
    const data = (value: string) => `{"data":[${Array.from({ length: limit + 1 }, () => value).join(',')}]}`;
    await expect(parse(data('1'), (key) => key === 'data')).resolves.toBeDefined();
    await expect(parse(data('{}'), (key) => key === 'data')).rejects.toThrow('values outside tensor data');
  });

  it('keeps tensor numbers and booleans in typed arrays, turning to a plain array only for other elements', async () => {
    const read = async (data: string) => ((await parse(`{"data": ${data}}`, () => true)) as { data: FlatTensorValues }).data;
    const many = await read(`[${Array.from({ length: 200_000 }, (_, i) => i).join(',')}]`);
    const blocks = many.numberBlocks()!;
    expect(blocks.every((block) => block instanceof Float64Array)).toBe(true);
    expect(blocks.at(-1)!.at(-1)).toBe(199_999);
    expect(blocks.reduce((count, block) => count + block.length, 0)).toBe(200_000);
    expect((await read('[true, [false]]')).asBooleans()).toEqual(new Uint8Array([1, 0]));
    const mixed = await read('[1, "a", 18446744073709551615]');
    expect([mixed.numberBlocks(), mixed.asBooleans(), mixed.hasBigInt]).toEqual([undefined, undefined, true]);
    expect(mixed.toArray()).toEqual([1, 'a', 18446744073709551615n]);
  });

  it('lets the event loop turn between slices of a large body', async () => {
    const text = `{"data":[${'1.5,'.repeat((4 * JSON_SLICE_BYTES) / 4)}2]}`;
    const { result, turns } = await countingTurns(() => parse(text, (key) => key === 'data'));
    const value = result as { data: FlatTensorValues };
    expect(value.data.length).toBe(JSON_SLICE_BYTES + 1);
    expect(turns).toBeGreaterThanOrEqual(3);
  });
  it('refuses a key its object already has, or gives the caller the say, knowing where the object is', async () => {
    await expect(parse('{"a": 1, "b": {"c": 1, "c": 2}}')).rejects.toThrow(new JsonParseError("duplicate key 'c' at byte 22"));
    await expect(parse('{"a": 1, "a": 1}')).rejects.toThrow("duplicate key 'a'");
    expect(await parse('[{"a": 1}, {"a": 2}]')).toEqual([{ a: 1 }, { a: 2 }]);
    const seen: unknown[] = [];
    const duplicateKey = (key: string, where: { depth: number; parentKey: string | undefined }) => (seen.push([key, where]), key === 'mine' ? new Error('mine twice') : undefined);
    await expect(parseJson(Buffer.from('{"p": {"mine": 1, "mine": 2}}'), { duplicateKey })).rejects.toThrow('mine twice');
    await expect(parseJson(Buffer.from('[{"x": 1, "x": 2}]'), { duplicateKey })).rejects.toThrow(JsonParseError);
    expect(seen).toEqual([
      ['mine', { depth: 1, parentKey: 'p' }],
      ['x', { depth: 1, parentKey: undefined }],
    ]);
  });

  it('lets the caller word nesting beyond the limit by the top-level member it is in', async () => {
    const tooDeep = (key: string | undefined) => (key === 'ready' ? new Error('ready is no boolean') : undefined);
    const deep = `${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}`;
    await expect(parseJson(Buffer.from(`{"ready": ${deep}}`), { tooDeep })).rejects.toThrow('ready is no boolean');
    await expect(parseJson(Buffer.from(`{"other": ${deep}}`), { tooDeep })).rejects.toThrow('JSON nesting depth exceeds maximum allowed limit (100)');
  });
});
