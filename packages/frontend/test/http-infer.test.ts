import { Buffer } from 'node:buffer';
import { connect } from 'node:net';
import { gunzipSync, gzipSync, deflateSync, inflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deserializeBytesTensor, serializeBytesTensor, toBf16, toFp16, type DataType } from '@tritium/core';
import { MAX_BYTES_ELEMENTS } from '../src/bytes-elements.js';
import { sleep } from '../../core/test/helpers/test-backend.js';
import { binaryRequest, httpRequest, parseInferResponse, rawExchange, type InferResponseJson } from './helpers/http-client.js';
import { startHttpFixture, type HttpFixture } from './helpers/http-fixture.js';
import {
  accumulateModel,
  addModel,
  allTypesModel,
  classifierModel,
  input,
  output,
  repeatModel,
  simpleModel,
  writeLabels,
} from './helpers/http-models.js';

let fx: HttpFixture;
beforeAll(async () => {
  fx = await startHttpFixture(
    {
      simple: simpleModel,
      add: addModel,
      all_types: allTypesModel,
      classifier: classifierModel,
      acc: accumulateModel,
      repeat: repeatModel,
      string_pair: { config: 'backend: "test"\ninput { name: "INPUT0" data_type: TYPE_STRING dims: [ 2 ] }\noutput { name: "OUTPUT0" data_type: TYPE_STRING dims: [ 2 ] }' },
    },
    { prepare: writeLabels('classifier') },
  );
});
afterAll(() => fx.stop());

/** POSTs a JSON inference request with exactly these headers (no Accept-Encoding unless given). */
async function inferJson(model: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await httpRequest(fx.url, { path: `/v2/models/${model}/infer`, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { ...res, json: JSON.parse(res.body.toString()) as InferResponseJson };
}

const fp32 = (name: string, data: number[], shape = [data.length]) => ({ name, datatype: 'FP32', shape, data });

/** One value list per datatype, each exact in JSON (64-bit integers within 2^53). */
const JSON_VALUES: Record<DataType, unknown[]> = {
  BOOL: [true, false, true],
  UINT8: [0, 255],
  UINT16: [0, 65535],
  UINT32: [0, 4294967295],
  UINT64: [0, Number.MAX_SAFE_INTEGER],
  INT8: [-128, 127],
  INT16: [-32768, 32767],
  INT32: [-2147483648, 2147483647],
  INT64: [-Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  FP16: [1.5, -2, 65504, 0.0999755859375],
  FP32: [0.5, -1.25, 3],
  FP64: [0.1, 1e300, -2.5],
  BF16: [1.5, -2, 256],
  BYTES: ['hello', '', 'ünïcode ✓'],
};

/** Every datatype's bytes on the wire, full-range 64-bit integers included. */
const BINARY_VALUES: Record<DataType, Uint8Array> = {
  BOOL: new Uint8Array([1, 0, 1]),
  UINT8: new Uint8Array([0, 255]),
  UINT16: bytes(new Uint16Array([0, 65535])),
  UINT32: bytes(new Uint32Array([0, 4294967295])),
  UINT64: bytes(new BigUint64Array([0n, 2n ** 64n - 1n])),
  INT8: bytes(new Int8Array([-128, 127])),
  INT16: bytes(new Int16Array([-32768, 32767])),
  INT32: bytes(new Int32Array([-2147483648, 2147483647])),
  INT64: bytes(new BigInt64Array([-(2n ** 63n), 2n ** 63n - 1n])),
  FP16: bytes(toFp16([1.5, -2, 65504])),
  FP32: bytes(new Float32Array([0.5, -1.25, Math.PI])),
  FP64: bytes(new Float64Array([0.1, 1e300])),
  BF16: bytes(toBf16([1.5, -2, 256])),
  BYTES: serializeBytesTensor(['hello', '', 'ünïcode ✓', new Uint8Array([0, 255])]),
};

function bytes(array: ArrayBufferView): Uint8Array {
  return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
}

function elementCount(type: DataType, data: Uint8Array): number {
  if (type === 'BYTES') return deserializeBytesTensor(data).length;
  const size = { BOOL: 1, UINT8: 1, INT8: 1, UINT16: 2, INT16: 2, FP16: 2, BF16: 2, UINT32: 4, INT32: 4, FP32: 4, UINT64: 8, INT64: 8, FP64: 8 }[type];
  return data.length / size;
}

const TYPES = Object.keys(JSON_VALUES) as DataType[];

describe('HTTP /infer with JSON tensors', () => {
  it('runs a model on JSON data, flat or nested, echoing the id only when given', async () => {
    const flat = await inferJson('simple', { id: 'req-1', inputs: [fp32('INPUT0', [1, 2, 3, 4])] });
    expect(flat.status).toBe(200);
    expect(flat.headers['content-type']).toBe('application/json');
    expect(flat.json).toEqual({ id: 'req-1', model_name: 'simple', model_version: '1', outputs: [{ name: 'OUTPUT0', datatype: 'FP32', shape: [4], data: [1, 2, 3, 4] }] });

    const nested = await inferJson('simple', { inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4], data: [[1, 2], [3, 4]] }] });
    expect(nested.json).toEqual({ model_name: 'simple', model_version: '1', outputs: [{ name: 'OUTPUT0', datatype: 'FP32', shape: [4], data: [1, 2, 3, 4] }] });

    const versioned = await httpRequest(fx.url, { path: '/v2/models/add/versions/1/infer', body: JSON.stringify({ inputs: [fp32('INPUT0', [1, 2, 3, 4]), fp32('INPUT1', [10, 20, 30, 40])] }) });
    expect(JSON.parse(versioned.body.toString()).outputs[0].data).toEqual([11, 22, 33, 44]);

    // Triton writes an id only when it is not empty.
    const empty = await inferJson('simple', { id: '', inputs: [fp32('INPUT0', [1, 2, 3, 4])] });
    expect(empty.json).toEqual({ model_name: 'simple', model_version: '1', outputs: [{ name: 'OUTPUT0', datatype: 'FP32', shape: [4], data: [1, 2, 3, 4] }] });
  });

  it('reads a version in the path as gRPC reads one: past the largest safe integer it is refused, not rounded', async () => {
    const res = await httpRequest(fx.url, { path: '/v2/models/simple/versions/99999999999999999999/infer', body: JSON.stringify({ inputs: [fp32('INPUT0', [1, 2, 3, 4])] }) });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body.toString())).toEqual({ error: "failed to get model version from specified version string '99999999999999999999'" });
  });

  it('round-trips every datatype as JSON: BOOL as booleans, BYTES as strings, FP16/BF16 as numbers', async () => {
    const inputs = TYPES.map((type) => ({ name: input(type), datatype: type, shape: [JSON_VALUES[type].length], data: JSON_VALUES[type] }));
    const { status, json } = await inferJson('all_types', { inputs });
    expect(status).toBe(200);
    for (const type of TYPES) {
      const out = json.outputs.find((o) => o.name === output(type));
      expect(out, type).toEqual({ name: output(type), datatype: type, shape: [JSON_VALUES[type].length], data: JSON_VALUES[type] });
    }
  });

  it('passes parameters named __proto__ and constructor to the model as ordinary ones', async () => {
    // Written as text: in an object literal `__proto__` would set the prototype instead.
    const body = `{"inputs": [${JSON.stringify(fp32('INPUT0', [1, 2, 3, 4]))}], "parameters": {"__proto__": "x", "constructor": "y"}}`;
    const res = await httpRequest(fx.url, { path: '/v2/models/simple/infer', headers: { 'content-type': 'application/json' }, body });
    expect(res.status).toBe(200);
    expect(Object.entries(fx.probe.batches.at(-1)![0]!.parameters)).toEqual([
      ['__proto__', 'x'],
      ['constructor', 'y'],
    ]);
  });

  it('writes float32 outputs as the doubles they are, as Triton does', async () => {
    const { json } = await inferJson('simple', { inputs: [fp32('INPUT0', [0.1, 1 / 3, 1e-8, 1e30])] });
    expect(json.outputs[0]!.data).toEqual(Array.from(new Float32Array([0.1, 1 / 3, 1e-8, 1e30])));
  });

  it('writes NaN and infinities, which JSON cannot hold, as null', async () => {
    const json = { inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4], parameters: { binary_data_size: 16 } }] };
    const { body, headers } = binaryRequest(json, [bytes(new Float32Array([Number.NaN, Infinity, -Infinity, 1]))]);
    const res = await httpRequest(fx.url, { path: '/v2/models/simple/infer', headers, body });
    expect(JSON.parse(res.body.toString()).outputs[0].data).toEqual([null, null, null, 1]);
  });

  it('returns only the requested outputs, in the order asked', async () => {
    const inputs = [
      { name: input('INT32'), datatype: 'INT32', shape: [1], data: [7] },
      { name: input('FP64'), datatype: 'FP64', shape: [1], data: [2.5] },
      { name: input('BOOL'), datatype: 'BOOL', shape: [1], data: [true] },
    ];
    const { json } = await inferJson('all_types', { inputs, outputs: [{ name: output('FP64') }, { name: output('INT32') }] });
    expect(json.outputs.map((o) => [o.name, o.data])).toEqual([
      [output('FP64'), [2.5]],
      [output('INT32'), [7]],
    ]);
  });
});

describe('HTTP /infer with binary tensor data', () => {
  it('round-trips every datatype as binary data, 64-bit integers over their full range', async () => {
    const types = TYPES;
    const json = {
      inputs: types.map((type) => ({ name: input(type), datatype: type, shape: [elementCount(type, BINARY_VALUES[type])], parameters: { binary_data_size: BINARY_VALUES[type].length } })),
      parameters: { binary_data_output: true },
    };
    const { body, headers } = binaryRequest(json, types.map((type) => BINARY_VALUES[type]));
    const res = await httpRequest(fx.url, { path: '/v2/models/all_types/infer', headers, body });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/octet-stream');
    const result = parseInferResponse(res.body, res.headers['inference-header-content-length']);
    for (const type of types) {
      const out = result.json.outputs.find((o) => o.name === output(type))!;
      expect(out.parameters, type).toEqual({ binary_data_size: BINARY_VALUES[type].length });
      expect(out.data, type).toBeUndefined();
      expect(new Uint8Array(result.binary[output(type)]!), type).toEqual(BINARY_VALUES[type]);
    }
    expect(new BigInt64Array(new Uint8Array(result.binary[output('INT64')]!).slice().buffer)).toEqual(new BigInt64Array([-(2n ** 63n), 2n ** 63n - 1n]));
  });

  it('mixes binary and JSON inputs and outputs: binary_data per output overrides binary_data_output', async () => {
    const a = new Float32Array([1, 2, 3, 4]);
    const json = {
      inputs: [
        { name: 'INPUT0', datatype: 'FP32', shape: [4], parameters: { binary_data_size: 16 } },
        { name: 'INPUT1', datatype: 'FP32', shape: [4], data: [10, 20, 30, 40] },
      ],
      outputs: [{ name: 'OUTPUT0', parameters: { binary_data: true } }],
    };
    const { body, headers } = binaryRequest(json, [bytes(a)]);
    const res = await httpRequest(fx.url, { path: '/v2/models/add/infer', headers, body });
    const result = parseInferResponse(res.body, res.headers['inference-header-content-length']);
    expect(Array.from(new Float32Array(new Uint8Array(result.binary.OUTPUT0!).slice().buffer))).toEqual([11, 22, 33, 44]);

    const asJson = {
      inputs: [fp32('INPUT0', [1, 2, 3, 4])],
      outputs: [{ name: 'OUTPUT0', parameters: { binary_data: false } }],
      parameters: { binary_data_output: true },
    };
    const plain = await inferJson('simple', asJson);
    expect(plain.headers['content-type']).toBe('application/json');
    expect(plain.headers['inference-header-content-length']).toBeUndefined();
    expect(plain.json.outputs[0]!.data).toEqual([1, 2, 3, 4]);

    // As Triton (L0_http test.sh): binary_data_output is for the outputs not listed; one listed without binary_data is JSON.
    const listed = await inferJson('simple', { inputs: [fp32('INPUT0', [1, 2, 3, 4])], outputs: [{ name: 'OUTPUT0' }], parameters: { binary_data_output: true } });
    expect(listed.json.outputs[0]!.data).toEqual([1, 2, 3, 4]);
    const unlisted = await httpRequest(fx.url, { path: '/v2/models/simple/infer', body: JSON.stringify({ inputs: [fp32('INPUT0', [1, 2, 3, 4])], parameters: { binary_data_output: true } }) });
    expect(parseInferResponse(unlisted.body, unlisted.headers['inference-header-content-length']).json.outputs[0]!.parameters).toEqual({ binary_data_size: 16 });
  });

  it('takes a raw binary request (Inference-Header-Content-Length: 0) as the only input, answering in binary', async () => {
    const data = new Float32Array([4, 3, 2, 1]);
    const res = await httpRequest(fx.url, { path: '/v2/models/simple/infer', headers: { 'inference-header-content-length': '0' }, body: bytes(data) });
    expect(res.status).toBe(200);
    const result = parseInferResponse(res.body, res.headers['inference-header-content-length']);
    expect(result.json.outputs[0]).toMatchObject({ name: 'OUTPUT0', datatype: 'FP32', shape: [4] });
    expect(Array.from(new Float32Array(new Uint8Array(result.binary.OUTPUT0!).slice().buffer))).toEqual([4, 3, 2, 1]);

    const many = await httpRequest(fx.url, { path: '/v2/models/add/infer', headers: { 'inference-header-content-length': '0' }, body: bytes(data) });
    expect(many.status).toBe(400);
    expect(JSON.parse(many.body.toString()).error).toContain("Raw request must only have 1 input (found 1) to be deduced but got 2 inputs in 'add' model configuration");

    // http_test.py test_byte_too_many_elements
    const strings = await httpRequest(fx.url, { path: '/v2/models/string_pair/infer', headers: { 'inference-header-content-length': '0' }, body: '427' });
    expect(strings.status).toBe(400);
    expect(JSON.parse(strings.body.toString()).error).toBe("For BYTE datatype raw input 'INPUT0', the model must have input shape [1]");
  });
});

describe('HTTP /infer extensions', () => {
  it('classifies outputs, with labels, one row per batch entry (classification extension)', async () => {
    const inputs = [{ name: 'INPUT0', datatype: 'FP32', shape: [2, 4], data: [0.1, 0.7, 0.2, 0, 3, 1, 2, 4] }];
    const { json } = await inferJson('classifier', { inputs, outputs: [{ name: 'OUTPUT0', parameters: { classification: 2 } }] });
    expect(json.outputs).toEqual([
      { name: 'OUTPUT0', datatype: 'BYTES', shape: [2, 2], data: ['0.700000:1:dog', '0.200000:2:bird', '4.000000:3:fish', '3.000000:0:cat'] },
    ]);
    const body = JSON.stringify({ inputs, outputs: [{ name: 'OUTPUT0', parameters: { classification: 1, binary_data: true } }] });
    const binary = await httpRequest(fx.url, { path: '/v2/models/classifier/infer', body });
    const result = parseInferResponse(binary.body, binary.headers['inference-header-content-length']);
    expect(result.json.outputs).toEqual([{ name: 'OUTPUT0', datatype: 'BYTES', shape: [2, 1], parameters: { binary_data_size: 37 } }]);
    expect(deserializeBytesTensor(result.binary.OUTPUT0!).map((e) => Buffer.from(e).toString())).toEqual(['0.700000:1:dog', '4.000000:3:fish']);
  });

  it('keeps a sequence state between requests by sequence_id, sequence_start and sequence_end (sequence extension)', async () => {
    const step = async (value: number, parameters: Record<string, unknown>) => {
      const { status, json } = await inferJson('acc', { inputs: [fp32('INPUT0', [value], [1, 1])], outputs: [{ name: 'OUTPUT0' }], parameters });
      expect(status, JSON.stringify(json)).toBe(200);
      return json.outputs[0]!.data![0];
    };
    expect(await step(1, { sequence_id: 42, sequence_start: true })).toBe(1);
    expect(await step(5, { sequence_id: 43, sequence_start: true })).toBe(5);
    expect(await step(2, { sequence_id: 42 })).toBe(3);
    expect(await step(10, { sequence_id: 43, sequence_end: true })).toBe(15);
    expect(await step(3, { sequence_id: 42, sequence_end: true })).toBe(6);
  });

  it('reads uint64 sequence ids exactly: 2^64-1, 2^53+1 and 2^53 are three sequences', async () => {
    const step = async (value: number, parameters: string) => {
      const body = `{"inputs": [${JSON.stringify(fp32('INPUT0', [value], [1, 1]))}], "outputs": [{"name": "OUTPUT0"}], "parameters": {${parameters}}}`;
      const res = await httpRequest(fx.url, { path: '/v2/models/acc/infer', body });
      expect(res.status, res.body.toString()).toBe(200);
      return (JSON.parse(res.body.toString()) as InferResponseJson).outputs[0]!.data![0];
    };
    expect(await step(1, '"sequence_id": 18446744073709551615, "sequence_start": true')).toBe(1);
    expect(await step(10, '"sequence_id": 9007199254740993, "sequence_start": true')).toBe(10);
    expect(await step(100, '"sequence_id": 9007199254740992, "sequence_start": true')).toBe(100);
    expect(await step(2, '"sequence_id": 18446744073709551615, "sequence_end": true')).toBe(3);
    expect(await step(20, '"sequence_id": 9007199254740993, "sequence_end": true')).toBe(30);
    expect(await step(200, '"sequence_id": 9007199254740992, "sequence_end": true')).toBe(300);
    const tooLarge = await httpRequest(fx.url, { path: '/v2/models/acc/infer', body: `{"inputs": [${JSON.stringify(fp32('INPUT0', [1], [1, 1]))}], "parameters": {"sequence_id": 18446744073709551616}}` });
    expect(tooLarge.status).toBe(400);
    expect(JSON.parse(tooLarge.body.toString()).error).toBe("parameter 'sequence_id' must be a non-negative integer of at most 2^64-1 or a string, got number 18446744073709551616");
  });

  it('refuses a binary_data_size beyond 2^53 as more than the body holds, and one beyond 2^64-1 as no uint64', async () => {
    const send = (size: string) => {
      const json = `{"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [4], "parameters": {"binary_data_size": ${size}}}]}`;
      return httpRequest(fx.url, { path: '/v2/models/simple/infer', headers: { 'inference-header-content-length': String(json.length) }, body: Buffer.concat([Buffer.from(json), Buffer.alloc(16)]) });
    };
    const large = await send('18446744073709551615');
    expect(large.status).toBe(400);
    expect(JSON.parse(large.body.toString()).error).toBe("unexpected size for input 'INPUT0': its binary_data_size is 18446744073709551615 bytes but only 16 remain in the request body");
    const beyond = await send('18446744073709551616');
    expect(JSON.parse(beyond.body.toString()).error).toBe("input 'INPUT0' parameters: 'binary_data_size' must be a non-negative integer of at most 2^64-1, got number 18446744073709551616");
  });

  it('passes priority, timeout and model parameters, and refuses bad ones and reserved triton_ keys', async () => {
    const inputs = [fp32('INPUT0', [1, 2, 3, 4])];
    expect((await inferJson('simple', { inputs, parameters: { priority: 1, timeout: 1_000_000, custom: 'x' } })).status).toBe(200);
    expect(fx.probe.batches.at(-1)![0]!.parameters).toEqual({ custom: 'x' });
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ priority: -1 }, "parameter 'priority' must be a non-negative integer of at most 2^64-1, got number -1"],
      [{ timeout: 'soon' }, `parameter 'timeout' must be a non-negative integer of at most 2^64-1, got the string "soon"`],
      [{ triton_secret: 'x' }, "parameter 'triton_secret': parameter keys starting with 'triton_' are reserved"],
      [{ sequence_start: true }, "parameters 'sequence_start' and 'sequence_end' need a non-zero 'sequence_id'"],
      [{ binary_data_output: 'yes' }, `'binary_data_output' must be a boolean`],
      [{ triton_enable_empty_final_response: true }, "parameter keys starting with 'triton_' are reserved"],
      [{ nested: { a: 1 } }, "parameter 'nested' must be a string, a number or a boolean"],
    ];
    for (const [parameters, message] of bad) {
      const res = await inferJson('simple', { inputs, parameters });
      expect(res.status, JSON.stringify(parameters)).toBe(400);
      expect(res.json.error).toContain(message);
    }
  });

  it('refuses a decoupled model as Triton does (501), pointing at generate_stream', async () => {
    const res = await inferJson('repeat', { inputs: [{ name: 'IN', datatype: 'INT32', shape: [1], data: [1] }] });
    expect(res.status).toBe(501);
    expect(res.json.error).toContain("HTTP end point doesn't support models with decoupled transaction policy");
    expect(res.json.error).toContain('/generate_stream');
  });

  it('cancels every inference of a client that disconnects, those of requests pipelined behind the first too', async () => {
    const stats = () => fx.server.statistics('simple').model_stats[0]!.inference_stats;
    const before = stats();
    const slow = JSON.stringify({ inputs: [fp32('INPUT0', [1, 2, 3, 4])], parameters: { delay_ms: 300 } });
    const request = `POST /v2/models/simple/infer HTTP/1.1\r\nHost: test\r\nContent-Length: ${slow.length}\r\n\r\n${slow}`;
    const { hostname, port } = new URL(fx.url);
    const socket = connect(Number(port), hostname, () => socket.write(request.repeat(3)));
    socket.on('error', () => {});
    await sleep(100);
    socket.destroy();
    await expect.poll(() => stats().fail.count - before.fail.count, { timeout: 5000 }).toBe(3);
    await sleep(500);
    expect(stats().success.count).toBe(before.success.count);
  });

  it('cancels the inference when the client disconnects', async () => {
    const before = fx.probe.cancelledSeen;
    const controller = new AbortController();
    const request = fetch(`${fx.url}/v2/models/simple/infer`, {
      method: 'POST',
      body: JSON.stringify({ inputs: [fp32('INPUT0', [1, 2, 3, 4])], parameters: { delay_ms: 300 } }),
      signal: controller.signal,
    });
    await sleep(100);
    controller.abort();
    await expect(request).rejects.toThrow();
    await expect.poll(() => fx.probe.cancelledSeen, { timeout: 5000 }).toBe(before + 1);
  });
});

describe('HTTP compression', () => {
  const body = JSON.stringify({ inputs: [fp32('INPUT0', [1, 2, 3, 4])] });
  const expected = [{ name: 'OUTPUT0', datatype: 'FP32', shape: [4], data: [1, 2, 3, 4] }];

  it('reads gzip and deflate request bodies', async () => {
    for (const [encoding, compressed] of [
      ['gzip', gzipSync(body)],
      ['deflate', deflateSync(body)],
      ['identity', Buffer.from(body)],
    ] as const) {
      const res = await httpRequest(fx.url, { path: '/v2/models/simple/infer', headers: { 'content-encoding': encoding }, body: compressed });
      expect(res.status, encoding).toBe(200);
      expect(JSON.parse(res.body.toString()).outputs, encoding).toEqual(expected);
    }
  });

  it('compresses responses as Accept-Encoding prefers, by q value, first listed on a tie', async () => {
    const cases: Array<[string, string | undefined]> = [
      ['gzip', 'gzip'],
      ['deflate', 'deflate'],
      ['gzip, deflate', 'gzip'],
      ['deflate;q=0.5, gzip;q=0.8', 'gzip'],
      ['gzip;q=0.2, identity;q=0.9', undefined],
      ['br', undefined],
    ];
    for (const [accept, encoding] of cases) {
      const res = await httpRequest(fx.url, { path: '/v2/models/simple/infer', headers: { 'accept-encoding': accept }, body });
      expect(res.headers['content-encoding'], accept).toBe(encoding);
      const plain = encoding === 'gzip' ? gunzipSync(res.body) : encoding === 'deflate' ? inflateSync(res.body) : res.body;
      expect(JSON.parse(plain.toString()).outputs, accept).toEqual(expected);
    }
  });

  it('compresses a binary response whole, its Inference-Header-Content-Length counting the JSON before compression', async () => {
    const res = await httpRequest(fx.url, {
      path: '/v2/models/simple/infer',
      headers: { 'accept-encoding': 'gzip' },
      body: JSON.stringify({ inputs: [fp32('INPUT0', [1, 2, 3, 4])], parameters: { binary_data_output: true } }),
    });
    expect(res.headers['content-encoding']).toBe('gzip');
    const result = parseInferResponse(gunzipSync(res.body), res.headers['inference-header-content-length']);
    expect(Array.from(new Float32Array(new Uint8Array(result.binary.OUTPUT0!).slice().buffer))).toEqual([1, 2, 3, 4]);
  });

  it('refuses an unknown Content-Encoding with 501, naming those it reads', async () => {
    const res = await httpRequest(fx.url, { path: '/v2/models/simple/infer', headers: { 'content-encoding': 'br' }, body });
    expect(res.status).toBe(501);
    expect(res.headers['accept-encoding']).toBe('gzip, deflate');
    expect(JSON.parse(res.body.toString())).toEqual({ error: "unsupported Content-Encoding 'br': a request body may be gzip, deflate or identity" });
  });
});

describe('HTTP /infer refusing what would exhaust the server', () => {
  const nested = (depth: number, leaf: string) => `${'['.repeat(depth)}${leaf}${']'.repeat(depth)}`;
  const post = (path: string, body: string) => httpRequest(fx.url, { path, body });

  it('refuses a request carrying more BYTES elements than MAX_BYTES_ELEMENTS, known from the shape before any is decoded', async () => {
    const count = MAX_BYTES_ELEMENTS + 1;
    const request = binaryRequest({ inputs: [{ name: input('BYTES'), datatype: 'BYTES', shape: [count], parameters: { binary_data_size: 4 * count } }] }, [new Uint8Array(4 * count)]);
    const res = await httpRequest(fx.url, { path: '/v2/models/all_types/infer', headers: request.headers, body: request.body });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body.toString()).error).toContain(
      `input 'INPUT_BYTES': BYTES of shape [${count}] brings the request to ${count} BYTES elements, more than the ${MAX_BYTES_ELEMENTS} a request may carry (about 104 bytes`,
    );
    const many = await inferJson('all_types', { inputs: [{ name: input('BYTES'), datatype: 'BYTES', shape: [1000], data: Array(1000).fill('x') }], outputs: [{ name: output('BYTES') }] });
    expect(many.status).toBe(200);
  });

  it("refuses JSON nested to Triton's limit (no value inside 100 of a tensor's arrays, nothing else 100 deep) with 400, as soon as it is met", async () => {
    const tooDeep = 'JSON nesting depth exceeds maximum allowed limit (100)';
    const deep = nested(100_000, '1');
    const cases: Array<[string, string]> = [
      ['/v2/models/simple/infer', `{"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [1], "data": ${nested(100, '1')}}]}`],
      ['/v2/models/simple/infer', `{"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [4], "data": ${deep}}]}`],
      ['/v2/models/simple/infer', `{"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": ${deep}, "data": [1]}]}`],
      ['/v2/models/simple/infer', `{"inputs": [${JSON.stringify(fp32('INPUT0', [1, 2, 3, 4]))}], "parameters": {"p": ${deep}}}`],
      ['/v2/models/simple/infer', `{"inputs": [${JSON.stringify(fp32('INPUT0', [1, 2, 3, 4]))}], "outputs": [{"name": "OUTPUT0", "parameters": {"classification": ${deep}}}]}`],
      ['/v2/models/simple/infer', `{"inputs": [${JSON.stringify(fp32('INPUT0', [1, 2, 3, 4]))}], "id": "x", "extra": ${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`],
      ['/v2/models/simple/generate', `{"INPUT0": ${deep}}`],
      ['/v2/repository/index', `{"other": ${deep}}`],
    ];
    for (const [path, body] of cases) {
      const res = await post(path, body);
      expect(res.status, body.slice(0, 120)).toBe(400);
      expect(JSON.parse(res.body.toString()).error).toMatch(new RegExp(`^failed to parse the .* JSON: ${tooDeep.replace(/[()]/g, '\\$&')} at byte \\d+$`));
    }
    // Triton's boundary: a value inside 99 arrays is read, flattened in row-major order.
    const flattened = await post('/v2/models/simple/infer', `{"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [4], "data": [${nested(98, '1, 2')}, [3, [4]]]}]}`);
    expect(flattened.status, flattened.body.toString()).toBe(200);
    expect(JSON.parse(flattened.body.toString()).outputs[0].data).toEqual([1, 2, 3, 4]);
    // The refusal comes as the nesting is met: what follows it is never read.
    const early = await post('/v2/models/simple/infer', `{"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [1], "data": ${nested(100, '1')}}], "rest": [${'1,'.repeat(100_000)}`);
    expect(JSON.parse(early.body.toString()).error).toContain(`${tooDeep} at byte`);
    expect(await rawExchange(fx.url, 'GET /v2/health/live HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n')).toMatch(/^HTTP\/1\.1 200 OK/);
  });
});
