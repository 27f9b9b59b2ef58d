import { Buffer } from 'node:buffer';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { binaryRequest, httpRequest, rawExchange } from './helpers/http-client.js';
import { startHttpFixture, type HttpFixture } from './helpers/http-fixture.js';
import { addModel, simpleModel } from './helpers/http-models.js';

const LIMIT = 4096;
let fx: HttpFixture;
let agent: Agent;
beforeAll(async () => {
  fx = await startHttpFixture({ simple: simpleModel, add: addModel }, { frontend: { bodyLimitBytes: LIMIT } });
  agent = new Agent({ keepAlive: true, maxSockets: 1 });
});
afterAll(async () => {
  agent.destroy();
  await fx.stop();
});

const good = JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4], data: [1, 2, 3, 4] }] });

/** Sends a request on the shared keep-alive connection, then a good one on the same connection, which must succeed. */
async function refused(body: string | Uint8Array, headers: Record<string, string> = {}, path = '/v2/models/simple/infer') {
  const res = await httpRequest(fx.url, { path, headers, body, agent });
  const after = await httpRequest(fx.url, { path: '/v2/models/simple/infer', body: good, agent });
  expect(after.status).toBe(200);
  return { status: res.status, error: (JSON.parse(res.body.toString()) as { error: string }).error };
}

describe('HTTP frontend: bad requests get a clear error and the connection keeps serving', () => {
  it('refuses JSON that does not parse or is not an inference request', async () => {
    const cases: Array<[string, string]> = [
      ['{"inputs": [', 'failed to parse the inference request JSON'],
      ['', 'failed to parse the inference request JSON'],
      ['[1, 2]', 'the inference request JSON must be an object, got an array'],
      ['{}', "the inference request needs an 'inputs' array, got nothing"],
      ['{"inputs": [7]}', 'input 0 must be an object, got number 7'],
      ['{"inputs": [{"datatype": "FP32", "shape": [4], "data": [1,2,3,4]}]}', "input 0 has no 'name' field"],
      ['{"inputs": [{"name": "INPUT0", "shape": [4], "data": [1,2,3,4]}]}', "input 'INPUT0' has no 'datatype' field"],
      ['{"inputs": [{"name": "INPUT0", "datatype": "FP33", "shape": [4], "data": [1,2,3,4]}]}', "input 'INPUT0': unknown datatype 'FP33'"],
      ['{"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [4]}]}', "input 'INPUT0' must set only one of the following fields"],
      ['{"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [4], "data": 5}]}', "input 'INPUT0': 'data' must be an array, got number 5"],
      ['{"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [4], "data": [1,2,3,[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[4]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}]}', 'JSON nesting depth exceeds maximum allowed limit (100)'],
      ['{"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [4], "data": [1,2,3,4]}], "parameters": {"priority": 18446744073709551616}}', "parameter 'priority' must be a non-negative integer of at most 2^64-1, got number 18446744073709551616"],
      ['{"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [4], "data": [1,2,3,4]}, {"name": "INPUT0", "datatype": "FP32", "shape": [4], "data": [1,2,3,4]}]}', "input 'INPUT0' is given more than once"],
      ['{"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [4], "data": [1,2,3,4]}], "outputs": {"name": "OUTPUT0"}}', "'outputs' must be an array, got an object"],
      ['{"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [4], "data": [1,2,3,4]}], "outputs": [{"name": "NOPE"}]}', 'NOPE'],
      ['{"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [4], "data": [1,2,3,4]}], "outputs": [{"name": "OUTPUT0", "parameters": {"classification": 0}}]}', "parameter 'classification' must be a positive integer"],
      ['{"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [4], "data": [1,2,3,4]}, {"name": "__proto__", "datatype": "FP32", "shape": [4], "data": [1,2,3,4]}]}', "unexpected input '__proto__'"],
      ['{"id": 7, "inputs": []}', "the inference request: 'id' must be a string, got number 7"],
    ];
    for (const [body, message] of cases) {
      const { status, error } = await refused(body);
      expect(status, body).toBe(400);
      expect(error, body).toContain(message);
    }
  });

  it("answers what Triton's clients match on in Triton's words and statuses: shapes, data counts and kinds, duplicate keys", async () => {
    const input = (shape: unknown, data: unknown) => JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape, data }] });
    const cases: Array<[string, number, string]> = [
      // http_test.py test_negative_dimensions: 500, as Triton's TritonJson errors are INTERNAL.
      [input([2, -5], [1]), 500, "Unable to parse 'shape': attempt to access JSON non-unsigned-integer as unsigned-integer: input 'INPUT0' dimension 1 is number -5"],
      [input(4, [1]), 500, "Unable to parse 'shape': attempt to access JSON non-array as array"],
      // test_buffer_size_overflow, the products computed exactly.
      ['{"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [16, 1152921504606846978], "data": [1]}]}', 400, "invalid shape for input 'INPUT0': shape [16,1152921504606846978] causes total element count to exceed maximum size of 9223372036854775807"],
      ['{"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [4, 1152921504606846978], "data": [1]}]}', 400, "byte size overflow for input 'INPUT0': element count (4611686018427387912) * data type size (4) exceeds maximum allowed size (9223372036854775807)"],
      ['{"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [9223372036854775808], "data": [1]}]}', 400, "invalid shape for input 'INPUT0': shape [9223372036854775808] contains one or more invalid dimensions"],
      // Converted, a JSON input may be no larger than the input size limit either.
      [input([1025], [1]), 400, `JSON input 'INPUT0' has a byte_size (4100 bytes) that exceeds the maximum allowed value of ${LIMIT} bytes. Use --http-max-input-size to increase the limit.`],
      [input([4], [1, '2', 3, 4]), 500, `Unable to parse 'data': attempt to access JSON non-number as double: input 'INPUT0' element 1 is the string "2"`],
      // A duplicate key is refused, wherever it is (Triton would take the first).
      ['{"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [4], "data": [1,2,3,4], "shape": [2]}]}', 400, "failed to parse the inference request JSON: duplicate key 'shape' at byte"],
    ];
    for (const [body, status, message] of cases) {
      const res = await refused(body);
      expect(res.status, body).toBe(status);
      expect(res.error, body).toContain(message);
    }
    // Triton's test.sh greps the whole body for these two.
    const short = await httpRequest(fx.url, { path: '/v2/models/simple/infer', body: input([4], [1, 2, 3]) });
    expect([short.status, short.body.toString()]).toEqual([500, `{"error":"Failed to parse 'data' field: shape does not match true shape"}`]);
    const long = await httpRequest(fx.url, { path: '/v2/models/simple/infer', body: input([4], [1, 2, 3, 4, 5]) });
    expect([long.status, long.body.toString()]).toEqual([500, `{"error":"Unable to parse 'data': Shape does not match true shape of 'data' field"}`]);
  });

  it('refuses a bad Inference-Header-Content-Length and binary sizes that do not add up', async () => {
    const header = (binary_data_size: number) => ({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4], parameters: { binary_data_size } }] });
    const data = new Uint8Array(16);
    const short = binaryRequest(header(16), [data.subarray(0, 12)]);
    const long = binaryRequest(header(16), [data, new Uint8Array(4)]);
    const wrongSize = binaryRequest(header(12), [data.subarray(0, 12)]);
    const cases: Array<[Uint8Array, Record<string, string>, string]> = [
      [short.body, { 'inference-header-content-length': 'ten' }, "Unable to parse Inference-Header-Content-Length, got: 'ten'"],
      [short.body, { 'inference-header-content-length': '-5' }, "Unable to parse Inference-Header-Content-Length, got: '-5'"],
      [short.body, { 'inference-header-content-length': '100000' }, `Inference-Header-Content-Length 100000 is more than the ${short.body.length} bytes of the request body`],
      [short.body, short.headers as Record<string, string>, "unexpected size for input 'INPUT0': its binary_data_size is 16 bytes but only 12 remain"],
      [long.body, long.headers as Record<string, string>, 'unexpected additional input data: 4 bytes of the request body follow'],
      [wrongSize.body, wrongSize.headers as Record<string, string>, "tensor 'INPUT0' holds 12 bytes, but FP32 of shape [4] needs 16"],
      [Buffer.from(JSON.stringify(header(16))), {}, "input 'INPUT0' has 'binary_data_size' but the request has no Inference-Header-Content-Length header"],
    ];
    for (const [body, headers, message] of cases) {
      const { status, error } = await refused(body, headers);
      expect(status, message).toBe(400);
      expect(error).toContain(message);
    }
  });

  it("refuses a body over bodyLimitBytes, declared or not, and one that decompresses past it, in Triton's words for each kind, closing only the oversized one", async () => {
    const big = JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4], data: [1, 2, 3, 4] }], pad: 'x'.repeat(LIMIT) });
    const size = Buffer.byteLength(big);
    const use = 'Use --http-max-input-size to increase the limit.';
    const cases: Array<[string, Record<string, string>, string]> = [
      ['/v2/models/simple/infer', {}, `request JSON size of ${size} bytes exceeds the maximum allowed input size of ${LIMIT} bytes. ${use}`],
      ['/v2/models/simple/infer', { 'inference-header-content-length': '5000' }, `request JSON size of 5000 bytes exceeds the maximum allowed input size of ${LIMIT} bytes. ${use}`],
      ['/v2/models/simple/infer', { 'inference-header-content-length': '0' }, `Raw input has a byte_size (${size} bytes) that exceeds the maximum allowed value of ${LIMIT} bytes. ${use}`],
      // JSON within the limit, binary inputs after it: Triton reads any size of those, here the body is bounded.
      ['/v2/models/simple/infer', { 'inference-header-content-length': '100' }, `request size of ${size} bytes exceeds the maximum allowed input size of ${LIMIT} bytes. ${use}`],
      ['/v2/models/simple/generate', { 'inference-header-content-length': '100' }, `request JSON size of ${size} bytes exceeds the maximum allowed input size of ${LIMIT} bytes. ${use}`],
      ['/v2/repository/models/simple/load', {}, `request JSON size of ${size} bytes exceeds the maximum allowed input size of ${LIMIT} bytes. ${use}`],
    ];
    for (const [path, headers, message] of cases) {
      const declared = await httpRequest(fx.url, { path, headers, body: big });
      expect(declared.status, path).toBe(400);
      expect(declared.headers.connection).toBe('close');
      expect(JSON.parse(declared.body.toString()).error, JSON.stringify(headers)).toBe(message);
    }

    // Chunked: no Content-Length, so the limit is found while reading.
    const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(`${fx.url}/v2/models/simple/infer`, { method: 'POST', agent: false }, (res) => {
        let body = '';
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      req.write(big.slice(0, 3000));
      req.end(big.slice(3000));
    });
    expect(chunked.status).toBe(400);
    expect(JSON.parse(chunked.body).error).toBe(`request JSON size of more than ${LIMIT} bytes exceeds the maximum allowed input size of ${LIMIT} bytes. ${use}`);

    const bomb = gzipSync(big);
    expect(bomb.length).toBeLessThan(LIMIT);
    const { status, error } = await refused(bomb, { 'content-encoding': 'gzip' });
    expect(status).toBe(400);
    expect(error).toBe(`Decompressed data size exceeds the maximum allowed value of ${LIMIT} bytes. ${use}`);

    const corrupt = await refused(Buffer.from('not gzip at all'), { 'content-encoding': 'gzip' });
    expect(corrupt.status).toBe(400);
    expect(corrupt.error).toContain('unable to decompress the gzip request body');
    expect((await httpRequest(fx.url, { path: '/v2/models/simple/infer', body: good })).status).toBe(200);
  });

  it("refuses a chunked body of more than 65,536 non-empty chunks as Triton does, the answer reaching a client still sending (http_request_many_chunks.py)", async () => {
    // The default body limit, 64 MiB, so that the chunk count is what refuses.
    const own = await startHttpFixture({ simple: simpleModel });
    const { hostname, port } = new URL(own.url);
    /** Sends `count` one-byte chunks on a raw socket, as Triton's test does, and reads what comes back. */
    const send = (count: number) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), hostname);
        const received: Buffer[] = [];
        socket.on('data', (chunk: Buffer) => received.push(chunk));
        socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error)));
        socket.on('close', () => resolve(Buffer.concat(received).toString('latin1')));
        socket.write(
          'POST /v2/models/simple/infer HTTP/1.1\r\nHost: test\r\nInference-Header-Content-Length: 0\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n',
        );
        // In batches of whole chunks, each batch written when the socket drains, until done or the server closes.
        let sent = 0;
        const more = () => {
          while (sent < count && !socket.destroyed) {
            const batch = Math.min(1024, count - sent);
            sent += batch;
            if (!socket.write('1\r\nA\r\n'.repeat(batch))) return void socket.once('drain', more);
          }
          if (!socket.destroyed) socket.write('0\r\n\r\n');
        };
        more();
      });
    // At the limit the body is read: 65,536 bytes, which the model's one FP32 [4] input cannot take.
    expect(await send(65_536)).toMatch(/^HTTP\/1\.1 400 [^]*"error":"tensor 'INPUT0'/);
    for (const count of [65_537, 1_000_000]) {
      const answer = await send(count);
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer).toContain('connection: close');
      expect(answer).toContain('{"error":"Chunked request body exceeds maximum of 65536 non-empty chunks. Send fewer or larger HTTP chunks."}');
    }
    expect((await httpRequest(own.url, { path: '/v2/models/simple/infer', body: good })).status).toBe(200);
    await own.stop();
  });

  it('answers a body cut short of its Content-Length, and bytes past it, with 400 and a reason, and closes that connection', async () => {
    const head = (length: number) => `POST /v2/models/simple/infer HTTP/1.1\r\nHost: test\r\nContent-Length: ${length}\r\n\r\n`;
    const truncated = await rawExchange(fx.url, head(good.length + 10) + good, { halfClose: true });
    expect(truncated).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(truncated).toContain('connection: close');
    expect(truncated).toContain('{"error":"the connection ended before the request did: its body is shorter than its Content-Length"}');

    // The request before the bytes that start no request is answered first; the refusal follows it.
    const overlong = await rawExchange(fx.url, `${head(good.length)}${good}GARBAGE\r\n\r\n`);
    expect(overlong).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\n\{"model_name":"simple"[^]*\}HTTP\/1\.1 400 Bad Request\r\n/);
    expect(overlong).toContain('malformed HTTP request (Parse Error: Invalid method encountered)');
    expect((await httpRequest(fx.url, { path: '/v2/models/simple/infer', body: good })).status).toBe(200);
  });

  it('answers pipelined requests in order, a refusal too, and holds a malformed one until those before it are answered', async () => {
    const slow = JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4], data: [1, 2, 3, 4] }], parameters: { delay_ms: 200 } });
    const infer = `POST /v2/models/simple/infer HTTP/1.1\r\nHost: test\r\nContent-Length: ${slow.length}\r\n\r\n${slow}`;
    const answers = await rawExchange(fx.url, `${infer}GET /v2/nothing HTTP/1.1\r\nHost: test\r\n\r\n${infer}GARBAGE\r\n\r\n`);
    const statuses = [...answers.matchAll(/HTTP\/1\.1 (\d+)/g)].map((match) => match[1]);
    expect(statuses).toEqual(['200', '404', '200', '400']);
  });

  it('takes a client that half-closes its connection (sends FIN) before its answer as gone, as Triton does: no answer, and its inference cancelled', async () => {
    const before = fx.probe.cancelledSeen;
    const slow = JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4], data: [1, 2, 3, 4] }], parameters: { delay_ms: 300 } });
    const answer = await rawExchange(fx.url, `POST /v2/models/simple/infer HTTP/1.1\r\nHost: test\r\nContent-Length: ${slow.length}\r\n\r\n${slow}`, { halfClose: true });
    expect(answer).toBe('');
    await expect.poll(() => fx.probe.cancelledSeen, { timeout: 5000 }).toBe(before + 1);
  });

  it('refuses a model or version that does not exist, and a request the model cannot take', async () => {
    const missing = await refused(good, {}, '/v2/models/ghost/infer');
    expect(missing.status).toBe(404);
    expect(missing.error).toContain('ghost');
    const version = await refused(good, {}, '/v2/models/simple/versions/9/infer');
    expect(version.status).toBe(404);
    const wrongType = await refused(JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [4], data: [1, 2, 3, 4] }] }));
    expect(wrongType.status).toBe(400);
    expect(wrongType.error).toContain('INT32');
    const failing = await refused(JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4], data: [1, 2, 3, 4] }], parameters: { fail: 'on purpose' } }));
    expect(failing.status).toBe(500);
    expect(failing.error).toContain('asked to fail: on purpose');
  });
});
