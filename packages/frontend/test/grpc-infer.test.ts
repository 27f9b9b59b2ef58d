import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import { describe, expect, it, vi } from 'vitest';
import { DATA_TYPES, dataTypeToConfig, deserializeBytesTensor, toFp16, typedArrayConstructor, type DataType } from '@tritium/core';
import { testConfig } from '../../core/test/helpers/repository.js';
import { MAX_BYTES_ELEMENTS } from '../src/bytes-elements.js';
import { expectStatus, raw, useGrpcFixture, type Message } from './helpers/grpc-fixture.js';
import { ACCUMULATE, REPEAT, SIMPLE } from './helpers/grpc-models.js';
import { useShmFile } from './helpers/grpc-shm.js';

const fx = useGrpcFixture();

const TWO = { config: testConfig({ inputs: 2 }) };
/** An identity model with one optional input and output per datatype, IN_<type> -> OUT_<type>. */
const TYPES = {
  config: `backend: "test"
max_batch_size: 0
${DATA_TYPES.map((t) => `input { name: "IN_${t}" data_type: ${dataTypeToConfig(t)} dims: [ -1 ] optional: true }`).join('\n')}
${DATA_TYPES.map((t) => `output { name: "OUT_${t}" data_type: ${dataTypeToConfig(t)} dims: [ -1 ] }`).join('\n')}
instance_group { count: 1 kind: KIND_CPU }`,
};
const fp32Request = (model: string, values: number[], extra: object = {}) => ({
  model_name: model,
  inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [values.length] }],
  raw_input_contents: [raw(Float32Array.from(values))],
  ...extra,
});

/** An output's raw bytes as the datatype's values (copied, so a misaligned buffer is no matter). */
function values(datatype: DataType, bytes: Buffer, count: number): unknown[] {
  if (datatype === 'BYTES') return deserializeBytesTensor(Uint8Array.from(bytes), count, 'output').map((e) => Buffer.from(e as Uint8Array));
  const TypedArray = typedArrayConstructor(datatype)!;
  return Array.from(new TypedArray(Uint8Array.from(bytes).buffer, 0, bytes.length / TypedArray.BYTES_PER_ELEMENT) as ArrayLike<unknown>);
}

describe('ModelInfer', () => {
  it('infers from raw contents, echoing the id, model and version, with raw output contents', async () => {
    const client = await fx.start({ two: TWO });
    const response = await client.call('ModelInfer', {
      model_name: 'two',
      id: 'req-7',
      inputs: [
        { name: 'INPUT0', datatype: 'FP32', shape: [4] },
        { name: 'INPUT1', datatype: 'FP32', shape: [4] },
      ],
      raw_input_contents: [raw(Float32Array.from([1, 2, 3, 4])), raw(Float32Array.from([5, 6, 7, 8]))],
    });
    expect(response).toMatchObject({ model_name: 'two', model_version: '1', id: 'req-7' });
    expect(response.outputs.map((o: Message) => [o.name, o.datatype, o.shape])).toEqual([
      ['OUTPUT0', 'FP32', ['4']],
      ['OUTPUT1', 'FP32', ['4']],
    ]);
    expect(values('FP32', response.raw_output_contents[1], 4)).toEqual([5, 6, 7, 8]);
    expect(response.outputs[0].contents).toBeNull();
  });

  it("answers with the request's own id, and an empty one when the request gave none (as Triton)", async () => {
    const client = await fx.start({ simple: SIMPLE });
    expect((await client.call('ModelInfer', fp32Request('simple', [1, 2, 3, 4], { id: 'mine' }))).id).toBe('mine');
    expect((await client.call('ModelInfer', fp32Request('simple', [1, 2, 3, 4]))).id).toBe('');
    expect((await client.call('ModelInfer', fp32Request('simple', [1, 2, 3, 4]))).id).toBe('');
  });

  it('returns only the outputs asked for, in the order asked', async () => {
    const client = await fx.start({ two: TWO });
    const response = await client.call('ModelInfer', {
      model_name: 'two',
      model_version: '1',
      inputs: [
        { name: 'INPUT1', datatype: 'FP32', shape: [4] },
        { name: 'INPUT0', datatype: 'FP32', shape: [4] },
      ],
      outputs: [{ name: 'OUTPUT1' }],
      raw_input_contents: [raw(Float32Array.from([5, 6, 7, 8])), raw(Float32Array.from([1, 2, 3, 4]))],
    });
    expect(response.outputs.map((o: Message) => o.name)).toEqual(['OUTPUT1']);
    expect(values('FP32', response.raw_output_contents[0], 4)).toEqual([5, 6, 7, 8]);
  });

  it.each(DATA_TYPES.map((t) => [t]))('carries %s raw contents both ways unchanged', async (datatype) => {
    const client = await fx.start({ types: TYPES });
    const bytes =
      datatype === 'BYTES' ? Buffer.from([2, 0, 0, 0, 104, 105, 0, 0, 0, 0]) : datatype === 'BOOL' ? Buffer.from([1, 0, 1, 1]) : Buffer.from(Array.from({ length: 32 }, (_, i) => (i * 37) % 251));
    const count = datatype === 'BYTES' ? 2 : datatype === 'BOOL' ? 4 : 32 / typedArrayConstructor(datatype)!.BYTES_PER_ELEMENT;
    const response = await client.call('ModelInfer', {
      model_name: 'types',
      inputs: [{ name: `IN_${datatype}`, datatype, shape: [count] }],
      outputs: [{ name: `OUT_${datatype}` }],
      raw_input_contents: [bytes],
    });
    expect(response.outputs[0]).toMatchObject({ name: `OUT_${datatype}`, datatype, shape: [String(count)] });
    expect(Buffer.from(response.raw_output_contents[0])).toEqual(bytes);
  });

  const TYPED: [DataType, string, unknown[], unknown[]][] = [
    ['BOOL', 'bool_contents', [true, false, true], [1, 0, 1]],
    ['UINT8', 'uint_contents', [0, 255], [0, 255]],
    ['UINT16', 'uint_contents', [1, 65535], [1, 65535]],
    ['UINT32', 'uint_contents', [1, 4294967295], [1, 4294967295]],
    ['UINT64', 'uint64_contents', ['18446744073709551615', '1'], [18446744073709551615n, 1n]],
    ['INT8', 'int_contents', [-128, 127], [-128, 127]],
    ['INT16', 'int_contents', [-32768, 32767], [-32768, 32767]],
    ['INT32', 'int_contents', [-2147483648, 7], [-2147483648, 7]],
    ['INT64', 'int64_contents', ['-9223372036854775808', '9007199254740993'], [-9223372036854775808n, 9007199254740993n]],
    ['FP32', 'fp32_contents', [1.5, -2], [1.5, -2]],
    ['FP64', 'fp64_contents', [0.1, 1e300], [0.1, 1e300]],
    ['BYTES', 'bytes_contents', [Buffer.from('hello'), Buffer.from([0, 255])], [Buffer.from('hello'), Buffer.from([0, 255])]],
  ];
  it.each(TYPED)('infers from typed %s contents (%s), answering with raw contents', async (datatype, field, sent, expected) => {
    const client = await fx.start({ types: TYPES });
    const response = await client.call('ModelInfer', {
      model_name: 'types',
      inputs: [{ name: `IN_${datatype}`, datatype, shape: [sent.length], contents: { [field]: sent } }],
      outputs: [{ name: `OUT_${datatype}` }],
    });
    expect(response.outputs[0]).toMatchObject({ datatype, shape: [String(sent.length)] });
    expect(values(datatype, response.raw_output_contents[0], sent.length)).toEqual(expected);
  });

  it('takes FP16 and BF16 only as raw contents, as Triton', async () => {
    const client = await fx.start({ types: TYPES });
    const half = toFp16([1, -2.5, 65504]);
    const response = await client.call('ModelInfer', {
      model_name: 'types',
      inputs: [{ name: 'IN_FP16', datatype: 'FP16', shape: [3] }],
      outputs: [{ name: 'OUT_FP16' }],
      raw_input_contents: [raw(half)],
    });
    expect(values('FP16', response.raw_output_contents[0], 3)).toEqual(Array.from(half));
    for (const datatype of ['FP16', 'BF16']) {
      await expectStatus(
        client.call('ModelInfer', { model_name: 'types', inputs: [{ name: `IN_${datatype}`, datatype, shape: [1], contents: { fp32_contents: [1] } }] }),
        status.INVALID_ARGUMENT,
        new RegExp(`^unexpected explicit tensor data for input tensor 'IN_${datatype}' for model 'types' of type 'FP32', expected datatype '${datatype}' \\(${datatype} data must come in raw_input_contents\\)$`),
      );
    }
  });

  it('passes request parameters (every InferParameter kind) to the model, and maps its failure to a status', async () => {
    const client = await fx.start({ simple: SIMPLE });
    await client.call(
      'ModelInfer',
      fp32Request('simple', [1, 2, 3, 4], {
        parameters: { delay_ms: { int64_param: 1 }, ratio: { double_param: 0.5 }, big: { uint64_param: '18446744073709551615' }, tag: { string_param: 'x' }, on: { bool_param: true } },
      }),
    );
    const seen = fx.probe.batches.at(-1)![0]!.parameters;
    expect(seen).toMatchObject({ delay_ms: 1, ratio: 0.5, big: '18446744073709551615', tag: 'x', on: true });
    await expectStatus(client.call('ModelInfer', fp32Request('simple', [1, 2, 3, 4], { parameters: { fail: { string_param: 'boom' } } })), status.INTERNAL, /asked to fail: boom/);
  });

  it('returns the top classes of an output for classification, with its labels', async () => {
    const config = `backend: "test"
max_batch_size: 2
input { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] label_filename: "labels.txt" }`;
    const client = await fx.start({ cls: { config } }, { modelControlMode: 'explicit' });
    await writeFile(join(fx.repo!.path, 'cls', 'labels.txt'), 'ant\nbee\ncat\ndog\n');
    await fx.server!.loadModel('cls');
    const response = await client.call('ModelInfer', {
      model_name: 'cls',
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [2, 4] }],
      outputs: [{ name: 'OUTPUT0', parameters: { classification: { int64_param: 2 } } }],
      raw_input_contents: [raw(Float32Array.from([0.1, 0.9, 0.5, 0.2, 4, 3, 2, 1]))],
    });
    expect(response.outputs[0]).toMatchObject({ name: 'OUTPUT0', datatype: 'BYTES', shape: ['2', '2'] });
    expect(values('BYTES', response.raw_output_contents[0], 4).map(String)).toEqual(['0.900000:1:bee', '0.500000:2:cat', '4.000000:0:ant', '3.000000:1:bee']);
  });

  it("keeps a sequence's state across requests through the sequence parameters", async () => {
    const client = await fx.start({ acc: ACCUMULATE });
    const step = async (value: number, parameters: object) => {
      const response = await client.call('ModelInfer', {
        model_name: 'acc',
        inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 1] }],
        raw_input_contents: [raw(Float32Array.from([value]))],
        parameters,
      });
      return values('FP32', response.raw_output_contents[0], 1)[0];
    };
    expect(await step(1, { sequence_id: { int64_param: 42 }, sequence_start: { bool_param: true } })).toBe(1);
    expect(await step(10, { sequence_id: { string_param: 'other' }, sequence_start: { bool_param: true } })).toBe(10);
    expect(await step(2, { sequence_id: { int64_param: 42 } })).toBe(3);
    expect(await step(3, { sequence_id: { int64_param: 42 }, sequence_end: { bool_param: true } })).toBe(6);
    expect(await step(5, { sequence_id: { string_param: 'other' }, sequence_end: { bool_param: true } })).toBe(15);
  });

  it("reads Triton's own parameters as Triton does: a negative int64 sequence_id as unsigned, any uint64 priority, binary_data_output as the model's", async () => {
    const client = await fx.start({ acc: ACCUMULATE });
    const step = (value: number, parameters: object) =>
      client.call('ModelInfer', { model_name: 'acc', inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 1] }], raw_input_contents: [raw(Float32Array.from([value]))], parameters });
    await step(1, { sequence_id: { int64_param: '-5' }, sequence_start: { bool_param: true }, priority: { uint64_param: '18446744073709551615' } });
    const response = await step(2, { sequence_id: { int64_param: '-5' }, sequence_end: { bool_param: true }, binary_data_output: { bool_param: true } });
    expect(values('FP32', response.raw_output_contents[0], 1)).toEqual([3]);
    const [first, second] = fx.probe.batches.map((batch) => batch[0]!);
    expect(first!.sequence?.id).toBe(2n ** 64n - 5n);
    // Beyond every priority level: the model's default one.
    expect(first!.priority).toBe(Number.MAX_SAFE_INTEGER);
    expect(second!.parameters).toEqual({ binary_data_output: true });
  });

  it('passes parameters named __proto__ and constructor to the model as ordinary ones', async () => {
    const client = await fx.start({ simple: SIMPLE });
    // Parsed, not written as a literal, where `__proto__` would set the prototype instead.
    const parameters = JSON.parse('{"__proto__": {"string_param": "x"}, "constructor": {"int64_param": 3}}') as object;
    await client.call('ModelInfer', fp32Request('simple', [1, 2, 3, 4], { parameters }));
    expect(Object.entries(fx.probe.batches[0]![0]!.parameters)).toEqual([
      ['__proto__', 'x'],
      ['constructor', 3],
    ]);
  });

  it.each([
    ['sequence_id', { double_param: 1 }, 'int64_param or string_param, not double_param'],
    ['sequence_id', { uint64_param: '1' }, 'int64_param or string_param, not uint64_param'],
    ['priority', { double_param: 1 }, 'int64_param or uint64_param, not double_param'],
    ['timeout', { double_param: 1 }, 'int64_param, not double_param'],
    ['timeout', { uint64_param: '1' }, 'int64_param, not uint64_param'],
    ['sequence_start', { int64_param: 1 }, 'bool_param, not int64_param'],
  ])("refuses Triton's parameter %s given as %o, as Triton", async (name, parameter, expected) => {
    const client = await fx.start({ simple: SIMPLE });
    await expectStatus(client.call('ModelInfer', fp32Request('simple', [1, 2, 3, 4], { parameters: { [name]: parameter } })), status.INVALID_ARGUMENT, `request parameter '${name}' takes ${expected}`);
  });

  it('refuses a decoupled model, as Triton, pointing to ModelStreamInfer', async () => {
    const client = await fx.start({ rep: REPEAT });
    await expectStatus(
      client.call('ModelInfer', { model_name: 'rep', inputs: [{ name: 'IN', datatype: 'INT32', shape: [1], contents: { int_contents: [1] } }] }),
      status.UNIMPLEMENTED,
      /ModelInfer RPC doesn't support models with decoupled transaction policy.*ModelStreamInfer/,
    );
  });

  it("reads whether a model is decoupled from the facts the server froze at load, never copying the model's config", async () => {
    const client = await fx.start({ simple: SIMPLE, rep: REPEAT });
    const configs = vi.spyOn(fx.server!, 'modelConfig');
    const lookups = vi.spyOn(fx.server!, 'modelFacts');
    const decoupledCall = () => client.call('ModelInfer', { model_name: 'rep', inputs: [{ name: 'IN', datatype: 'INT32', shape: [1], contents: { int_contents: [1] } }] });
    for (let round = 0; round < 2; round++) {
      expect(values('FP32', (await client.call('ModelInfer', fp32Request('simple', [1, 2, 3, 4]))).raw_output_contents[0], 4)).toEqual([1, 2, 3, 4]);
      await expectStatus(decoupledCall(), status.UNIMPLEMENTED, /decoupled transaction policy/);
    }
    expect(configs).not.toHaveBeenCalled();
    expect(lookups.mock.calls).toEqual([
      ['simple', undefined],
      ['rep', undefined],
      ['simple', undefined],
      ['rep', undefined],
    ]);
  });

  it('cancels the request when the client gives up on the call', async () => {
    const client = await fx.start({ simple: SIMPLE });
    const deadline = new Date(Date.now() + 150);
    const call = new Promise((resolve, reject) =>
      client.inference.ModelInfer!(fp32Request('simple', [1, 2, 3, 4], { parameters: { delay_ms: { int64_param: 1_000 } } }), { deadline }, (error: unknown, response: unknown) =>
        error ? reject(error) : resolve(response),
      ),
    );
    await expectStatus(call, status.DEADLINE_EXCEEDED, /.*/);
    await expect.poll(() => fx.server!.statistics('simple').model_stats[0]!.inference_stats.fail.count).toBe(1);
  });
});

describe('ModelInfer with bad input', () => {
  const CASES: [string, object, number, RegExp][] = [
    ['an unknown model', fp32Request('nope', [1, 2, 3, 4]), status.NOT_FOUND, /'nope'/],
    ['a bad version string', fp32Request('simple', [1, 2, 3, 4], { model_version: 'v1' }), status.INVALID_ARGUMENT, /version string 'v1'/],
    ['a wrong shape', fp32Request('simple', [1, 2, 3, 4, 5]), status.INVALID_ARGUMENT, /INPUT0.*shape/],
    ['a wrong byte size', { ...fp32Request('simple', [1, 2, 3, 4]), raw_input_contents: [Buffer.alloc(12)] }, status.INVALID_ARGUMENT, /'INPUT0' holds 12 bytes, but FP32 of shape \[4\] needs 16/],
    ['more raw contents than inputs', { ...fp32Request('simple', [1, 2, 3, 4]), raw_input_contents: [Buffer.alloc(16), Buffer.alloc(16)] }, status.INVALID_ARGUMENT, /raw_input_contents holds 2 entries, but only 1/],
    ['no data for an input', { ...fp32Request('simple', [1, 2, 3, 4]), raw_input_contents: [] }, status.INVALID_ARGUMENT, /input 'INPUT0': no data/],
    ['an unknown datatype', { ...fp32Request('simple', [1]), inputs: [{ name: 'INPUT0', datatype: 'FP8', shape: [4] }] }, status.INVALID_ARGUMENT, /unknown datatype 'FP8'/],
    ['a negative shape dimension', { ...fp32Request('simple', [1, 2, 3, 4]), inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [-1, 4] }] }, status.INVALID_ARGUMENT, /input 'INPUT0': shape \[-1,4\] must hold non-negative integers/],
    ['a shape dimension beyond 2^53', { ...fp32Request('simple', [1, 2, 3, 4]), inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: ['9007199254740993'] }] }, status.INVALID_ARGUMENT, /shape \[9007199254740993\] must hold/],
    ['an input given twice', { ...fp32Request('simple', [1, 2, 3, 4]), inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4] }, { name: 'INPUT0', datatype: 'FP32', shape: [4] }] }, status.INVALID_ARGUMENT, /'INPUT0' appears more than once/],
    // Triton's words (src/grpc/infer_handler.cc), which its client example grpc_explicit_int_content_client.py checks.
    ['contents beside raw contents', { ...fp32Request('simple', [1, 2, 3, 4]), inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4], contents: { fp32_contents: [1, 2, 3, 4] } }] }, status.INVALID_ARGUMENT, /^contents field must not be specified when using raw_input_contents for 'INPUT0' for model 'simple'$/],
    ['contents in two fields', { model_name: 'simple', inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1], contents: { fp32_contents: [1], bytes_contents: [Buffer.from('a')] } }] }, status.INVALID_ARGUMENT, /^unexpected explicit tensor data for input tensor 'INPUT0' for model 'simple', binary data was already supplied\. \(fp32_contents and bytes_contents both hold data\)$/],
    ['typed contents of another type', { model_name: 'simple', inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [2], contents: { int_contents: [1, 2] } }] }, status.INVALID_ARGUMENT, /^unexpected explicit tensor data for input tensor 'INPUT0' for model 'simple' of type 'INT32', expected datatype 'FP32' \(FP32 data belongs in fp32_contents\)$/],
    ['typed contents in two fields, the first of another type', { model_name: 'simple', inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1], contents: { fp32_contents: [1], int_contents: [1] } }] }, status.INVALID_ARGUMENT, /of type 'INT32', expected datatype 'FP32'/],
    ['too few typed values', { model_name: 'simple', inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4], contents: { fp32_contents: [1, 2] } }] }, status.INVALID_ARGUMENT, /expected 4 elements/],
    ['a parameter without a value', fp32Request('simple', [1, 2, 3, 4], { parameters: { empty: {} } }), status.INVALID_ARGUMENT, /parameter 'empty' has no value/],
    ['a reserved triton_ parameter', fp32Request('simple', [1, 2, 3, 4], { parameters: { triton_secret: { bool_param: true } } }), status.INVALID_ARGUMENT, /parameter 'triton_secret': parameter keys starting with 'triton_' are reserved for Triton usage/],
    ['a sequence flag without an id', fp32Request('simple', [1, 2, 3, 4], { parameters: { sequence_start: { bool_param: true } } }), status.INVALID_ARGUMENT, /need a non-zero 'sequence_id'/],
    ['a sequence flag of the wrong kind', fp32Request('simple', [1, 2, 3, 4], { parameters: { sequence_id: { int64_param: 3 }, sequence_end: { int64_param: 1 } } }), status.INVALID_ARGUMENT, /'sequence_end' takes bool_param, not int64_param/],
    ['a bad classification count', fp32Request('simple', [1, 2, 3, 4], { outputs: [{ name: 'OUTPUT0', parameters: { classification: { int64_param: 0 } } }] }), status.INVALID_ARGUMENT, /'classification' must be a positive integer/],
    ['an unknown output', fp32Request('simple', [1, 2, 3, 4], { outputs: [{ name: 'OUT9' }] }), status.INVALID_ARGUMENT, /OUT9/],
    ['an unregistered shared-memory region', { model_name: 'simple', inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4], parameters: { shared_memory_region: { string_param: 'none' }, shared_memory_byte_size: { int64_param: 16 } } }] }, status.NOT_FOUND, /'none'/],
  ];

  it.each(CASES)('refuses %s, naming the fault, and keeps serving', async (_case, request, code, details) => {
    const client = await fx.start({ simple: SIMPLE });
    await expectStatus(client.call('ModelInfer', request), code, details);
    const response = await client.call('ModelInfer', fp32Request('simple', [1, 2, 3, 4]));
    expect(values('FP32', response.raw_output_contents[0], 4)).toEqual([1, 2, 3, 4]);
  });
});

describe('ModelInfer BYTES element limit', () => {
  const unregistered = { shared_memory_region: { string_param: 'none' }, shared_memory_byte_size: { int64_param: 0 } };
  const over = MAX_BYTES_ELEMENTS + 1;
  const refusal = (input: string, total: number, shape = `[${over}]`) =>
    `^input '${input}': BYTES of shape ${shape} brings the request to ${total} BYTES elements, more than the ${MAX_BYTES_ELEMENTS} a request may carry \\(about 104 bytes of heap each once decoded`.replace(/[[\]]/g, '\\$&');

  // Each refusal comes before the input is read: no raw bytes, no typed values, no region could hold that many elements.
  it.each([
    ['raw contents', { inputs: [{ name: 'IN_BYTES', datatype: 'BYTES', shape: [over] }], raw_input_contents: [Buffer.alloc(0)] }],
    ['typed bytes_contents', { inputs: [{ name: 'IN_BYTES', datatype: 'BYTES', shape: [over], contents: { bytes_contents: [Buffer.from('a')] } }] }],
    ['shared memory', { inputs: [{ name: 'IN_BYTES', datatype: 'BYTES', shape: [over], parameters: unregistered }] }],
  ])('refuses more BYTES elements than MAX_BYTES_ELEMENTS in %s, from the shape, and keeps serving', async (_source, request) => {
    const client = await fx.start({ types: TYPES });
    await expectStatus(client.call('ModelInfer', { model_name: 'types', ...request }), status.INVALID_ARGUMENT, refusal('IN_BYTES', over));
    const response = await client.call('ModelInfer', {
      model_name: 'types',
      inputs: [{ name: 'IN_BYTES', datatype: 'BYTES', shape: [1], contents: { bytes_contents: [Buffer.from('ok')] } }],
      outputs: [{ name: 'OUT_BYTES' }],
    });
    expect(values('BYTES', response.raw_output_contents[0], 1)).toEqual([Buffer.from('ok')]);
  });

  it("counts every input of the request, refusing the one that takes it over", async () => {
    const client = await fx.start({ types: TYPES });
    const half = Math.floor(MAX_BYTES_ELEMENTS / 4) * 2;
    const request = {
      model_name: 'types',
      inputs: [
        { name: 'A', datatype: 'BYTES', shape: [half], contents: { bytes_contents: [] } },
        { name: 'B', datatype: 'BYTES', shape: [2, half / 2], contents: { bytes_contents: [] } },
        { name: 'C', datatype: 'BYTES', shape: [MAX_BYTES_ELEMENTS - 2 * half + 1], parameters: unregistered },
      ],
    };
    await expectStatus(client.call('ModelInfer', request), status.INVALID_ARGUMENT, refusal('C', over, `[${MAX_BYTES_ELEMENTS - 2 * half + 1}]`));
  });
});

describe('ModelInfer with system shared memory', () => {
  const shm = useShmFile();
  const ALLOW_SHM = { allowClientSharedMemory: true };

  it('reads inputs from and writes outputs to registered regions', async () => {
    const client = await fx.start({ two: TWO }, {}, ALLOW_SHM);
    const inputs = new Float32Array([1, 2, 3, 4, 5, 6, 7, 8]);
    const inKey = await shm.create(40, new Uint8Array(inputs.buffer));
    const outKey = await shm.create(64);
    await client.call('SystemSharedMemoryRegister', { name: 'in', key: inKey, byte_size: 40 });
    await client.call('SystemSharedMemoryRegister', { name: 'out', key: `/${outKey}`, offset: 8, byte_size: 56 });
    const region = (name: string, byteSize: number, offset = 0) => ({
      shared_memory_region: { string_param: name },
      shared_memory_byte_size: { int64_param: byteSize },
      ...(offset && { shared_memory_offset: { int64_param: offset } }),
    });
    const response = await client.call('ModelInfer', {
      model_name: 'two',
      inputs: [
        { name: 'INPUT0', datatype: 'FP32', shape: [4], parameters: region('in', 16) },
        { name: 'INPUT1', datatype: 'FP32', shape: [4] },
      ],
      outputs: [{ name: 'OUTPUT0', parameters: region('out', 16, 4) }, { name: 'OUTPUT1' }],
      raw_input_contents: [raw(Float32Array.from([9, 9, 9, 9]))],
    });
    expect(response.outputs[0]).toMatchObject({ name: 'OUTPUT0', datatype: 'FP32', shape: ['4'] });
    expect(response.outputs[0].parameters).toEqual({
      shared_memory_region: { string_param: 'out', parameter_choice: 'string_param' },
      shared_memory_byte_size: { int64_param: '16', parameter_choice: 'int64_param' },
      shared_memory_offset: { int64_param: '4', parameter_choice: 'int64_param' },
    });
    expect(response.raw_output_contents.map((b: Buffer) => b.length)).toEqual([0, 16]);
    expect(values('FP32', response.raw_output_contents[1], 4)).toEqual([9, 9, 9, 9]);
    // The region starts 8 bytes into the key, and the output 4 bytes into the region.
    expect(values('FP32', (await shm.read(outKey)).subarray(12, 28), 4)).toEqual([1, 2, 3, 4]);
  });

  it('refuses an output region too small for the output', async () => {
    const client = await fx.start({ simple: SIMPLE }, {}, ALLOW_SHM);
    await client.call('SystemSharedMemoryRegister', { name: 'out', key: await shm.create(8), byte_size: 8 });
    await expectStatus(
      client.call('ModelInfer', fp32Request('simple', [1, 2, 3, 4], { outputs: [{ name: 'OUTPUT0', parameters: { shared_memory_region: { string_param: 'out' }, shared_memory_byte_size: { int64_param: 8 } } }] })),
      status.INVALID_ARGUMENT,
      /the output needs 16 bytes, only 8 were given/,
    );
  });
});
