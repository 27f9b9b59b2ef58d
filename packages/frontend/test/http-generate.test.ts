import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep } from '../../core/test/helpers/test-backend.js';
import { startHttpFixture, type HttpFixture } from './helpers/http-fixture.js';
import { failingStreamBackend, failingStreamModel, repeatModel, simpleModel, STREAM_FAILURE, textModel } from './helpers/http-models.js';

let fx: HttpFixture;
beforeAll(async () => {
  fx = await startHttpFixture({ text: textModel, repeat: repeatModel, failing: failingStreamModel, simple: simpleModel }, { backends: [failingStreamBackend()] });
});
afterAll(() => fx.stop());

const post = (path: string, body: unknown) => fetch(`${fx.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** The JSON of each `data:` event of a server-sent event stream. */
async function events(res: Response): Promise<unknown[]> {
  const text = await res.text();
  expect(text.endsWith('\n\n')).toBe(true);
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((event) => {
      expect(event.startsWith('data: ')).toBe(true);
      return JSON.parse(event.slice('data: '.length));
    });
}

describe('HTTP generate extension', () => {
  it('maps top-level keys to inputs (a scalar to one element, a list as it is) and answers one flat object', async () => {
    const res = await post('/v2/models/text/generate', { id: 'g1', text_input: 'hello' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toEqual({ id: 'g1', model_name: 'text', model_version: '1', text_output: 'hello' });
    // The batch dimension (-1) takes what the fixed dimensions leave.
    expect(fx.probe.batches.at(-1)![0]!.inputs.text_input!.shape).toEqual([1, 1]);
    const batch = await post('/v2/models/text/generate', { text_input: ['a', 'b'] });
    expect(await batch.json()).toEqual({ model_name: 'text', model_version: '1', text_output: ['a', 'b'] });
    expect(fx.probe.batches.at(-1)![0]!.inputs.text_input!.shape).toEqual([2, 1]);
    const list = await post('/v2/models/simple/generate', { INPUT0: [1.5, 2.5, 3, 4] });
    expect(await list.json()).toEqual({ model_name: 'simple', model_version: '1', OUTPUT0: [1.5, 2.5, 3, 4] });
  });

  it('takes inputs and request parameters from `parameters` too, passing the others to the model', async () => {
    const res = await post('/v2/models/text/versions/1/generate', { parameters: { text_input: 'from parameters', temperature: 0.5, stream: false }, top_k: 3 });
    expect(await res.json()).toEqual({ model_name: 'text', model_version: '1', text_output: 'from parameters' });
    expect(fx.probe.batches.at(-1)![0]!.parameters).toEqual({ temperature: 0.5, stream: false, top_k: 3 });
  });

  it('passes keys named __proto__ and constructor to the model as ordinary parameters', async () => {
    const body = '{"text_input": "a", "__proto__": "x", "parameters": {"constructor": "y"}}';
    const res = await fetch(`${fx.url}/v2/models/text/generate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(res.status).toBe(200);
    expect(Object.entries(fx.probe.batches.at(-1)![0]!.parameters)).toEqual([
      ['__proto__', 'x'],
      ['constructor', 'y'],
    ]);
  });

  it('refuses what does not map: a shape the values cannot fill, an object parameter, a reserved key', async () => {
    const cases: Array<[unknown, string]> = [
      [{ text_input: ['a', 'b', 'c', 'd', 'e'] }, "model 'text': input 'text_input' has batch size 5, the model accepts 1 to 4"],
      [{ text_input: 'a', options: { deep: true } }, "parameter 'options' has invalid type"],
      [{ text_input: 'a', triton_secret: 1 }, "parameter keys starting with 'triton_' are reserved"],
      [{ id: 5, text_input: 'a' }, "'id' must be a string"],
    ];
    for (const [body, message] of cases) {
      const res = await post('/v2/models/text/generate', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(((await res.json()) as { error: string }).error).toContain(message);
    }
    const unfit = await post('/v2/models/simple/generate', { INPUT0: [1, 2, 3] });
    expect(unfit.status).toBe(400);
    expect(await unfit.json()).toEqual({ error: "The schema can not convert input 'INPUT0' to tensor with proper shape: 3 elements do not fit shape [4]" });
    expect((await post('/v2/models/nope/generate', { text_input: 'a' })).status).toBe(404);
  });

  it('answers /generate on a decoupled model that sends exactly one response, and refuses it otherwise', async () => {
    const one = await post('/v2/models/repeat/generate', { IN: 7, count: 1 });
    expect(await one.json()).toEqual({ model_name: 'repeat', model_version: '1', OUT: 7 });
    for (const count of [0, 3]) {
      const res = await post('/v2/models/repeat/generate', { IN: 7, count });
      expect(res.status).toBe(500);
      expect(((await res.json()) as { error: string }).error).toContain('generate expects model to produce exactly 1 response');
    }
  });

  it('streams each response of a decoupled model as a server-sent event', async () => {
    const res = await post('/v2/models/repeat/generate_stream', { IN: 3, count: 3 });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(await events(res)).toEqual(Array(3).fill({ model_name: 'repeat', model_version: '1', OUT: 3 }));
  });

  it('streams the one response of a model that is not decoupled', async () => {
    const res = await post('/v2/models/simple/generate_stream', { INPUT0: [1, 2, 3, 4] });
    expect(await events(res)).toEqual([{ model_name: 'simple', model_version: '1', OUTPUT0: [1, 2, 3, 4] }]);
  });

  it('marks each response not final and ends with an empty final one when triton_enable_empty_final_response is set', async () => {
    const res = await post('/v2/models/repeat/generate_stream', { id: 's1', IN: 1, count: 2, parameters: { triton_enable_empty_final_response: true } });
    expect(await events(res)).toEqual([
      { id: 's1', model_name: 'repeat', model_version: '1', OUT: 1, triton_final_response: false },
      { id: 's1', model_name: 'repeat', model_version: '1', OUT: 1, triton_final_response: false },
      { id: 's1', model_name: 'repeat', model_version: '1', triton_final_response: true },
    ]);
    const none = await post('/v2/models/repeat/generate_stream', { IN: 1, count: 0, triton_enable_empty_final_response: true });
    expect(await events(none)).toEqual([{ model_name: 'repeat', model_version: '1', triton_final_response: true }]);
    const empty = await post('/v2/models/repeat/generate_stream', { IN: 1, count: 0 });
    expect(await empty.text()).toBe('');
  });

  it("refuses values of the wrong JSON kind, a bad 'parameters' and an input given twice in Triton's words", async () => {
    const postText = (body: string) => fetch(`${fx.url}/v2/models/text/generate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const cases: Array<[string, number, string]> = [
      ['{"text_input": 7}', 500, "attempt to access JSON non-string as string: input 'text_input' element 0 is number 7"],
      ['{"text_input": {"USER": "a"}}', 500, 'attempt to access JSON non-string as string'],
      ['{"text_input": "a", "parameters": 1}', 500, "Expected JSON object for keyword: 'parameters': attempt to access JSON non-object as object"],
      ['{"text_input": "a", "parameters": {"nested": {"twice": 1}}}', 400, "Converting keyword: 'parameters': parameter 'nested' has invalid type. It should be either 'int', 'bool', or 'string'."],
      ['{"text_input": "a", "PARAMS": {"P": 0}}', 400, "parameter 'PARAMS' has invalid type. It should be either 'int', 'bool', or 'string'."],
      // Triton's test_duplicate_inputs: the first duplicate in document order.
      ['{"text_input": "a", "x": 1, "text_input": "b"}', 400, "input 'text_input' already exists in request"],
      ['{"text_input": "a", "parameters": {"text_input": "b"}}', 400, "input 'text_input' already exists in request"],
      ['{"parameters": {"text_input": "a", "text_input": "b"}}', 400, "input 'text_input' already exists in request"],
      // A duplicate that is not an input, which Triton takes (the first), is refused.
      ['{"text_input": "a", "x": 1, "x": 2}', 400, "failed to parse the generate request JSON: duplicate key 'x' at byte"],
    ];
    for (const [body, status, message] of cases) {
      const res = await postText(body);
      expect(res.status, body).toBe(status);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(((await res.json()) as { error: string }).error, body).toContain(message);
    }
    const notInteger = await post('/v2/models/repeat/generate_stream', { IN: 'x' });
    expect(notInteger.status).toBe(500);
    expect(((await notInteger.json()) as { error: string }).error).toBe(
      'Unable to parse \'data\': attempt to access JSON non-signed-integer as signed-integer: input \'IN\' element 0 is the string "x"',
    );
  });

  it('says which response the model sent as its last, and sends the empty final response only when none was', async () => {
    const withLast = await post('/v2/models/repeat/generate_stream', { IN: 2, count: 2, final_with_last: true, triton_enable_empty_final_response: true });
    expect(await events(withLast)).toEqual([
      { model_name: 'repeat', model_version: '1', OUT: 2, triton_final_response: false },
      { model_name: 'repeat', model_version: '1', OUT: 2, triton_final_response: true },
    ]);
    // A model that is not decoupled sends its one response as its last.
    const single = await post('/v2/models/simple/generate_stream', { id: '', INPUT0: [1, 2, 3, 4], triton_enable_empty_final_response: true });
    expect(await events(single)).toEqual([{ model_name: 'simple', model_version: '1', OUTPUT0: [1, 2, 3, 4], triton_final_response: true }]);
  });

  it('sends a model error as an error event, under the 200 after a response or with its own status as the first, and a refusal as a JSON error', async () => {
    const res = await post('/v2/models/failing/generate_stream', { IN: 5 });
    expect(res.status).toBe(200);
    const received = await events(res);
    expect(received.slice(0, 2)).toEqual(Array(2).fill({ model_name: 'failing', model_version: '1', OUT: 5 }));
    expect(received[2]).toEqual({ error: expect.stringContaining(STREAM_FAILURE) });
    expect(received).toHaveLength(3);

    // Refused before the model runs (core's check of the batch size): a JSON error.
    const refused = await post('/v2/models/text/generate_stream', { text_input: ['a', 'b', 'c', 'd', 'e'] });
    expect(refused.status).toBe(400);
    expect(refused.headers.get('content-type')).toBe('application/json');
    expect(((await refused.json()) as { error: string }).error).toContain('has batch size 5');

    // The model's error as the first answer: an event, under the error's status.
    const failedFirst = await post('/v2/models/simple/generate_stream', { INPUT0: [1, 2, 3, 4], fail: 'at once' });
    expect(failedFirst.status).toBe(500);
    expect(failedFirst.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(await events(failedFirst)).toEqual([{ error: expect.stringContaining('asked to fail: at once') }]);
  });

  it('cancels a stream whose client disconnects', async () => {
    type Stats = { model_stats: Array<{ inference_stats: { fail: { count: number } } }> };
    const failures = async () => ((await (await fetch(`${fx.url}/v2/models/repeat/stats`)).json()) as Stats).model_stats[0]!.inference_stats.fail.count;
    const before = await failures();
    const controller = new AbortController();
    const res = await fetch(`${fx.url}/v2/models/repeat/generate_stream`, {
      method: 'POST',
      body: JSON.stringify({ IN: 1, count: 1000, interval_ms: 10 }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    // Uncancelled, the stream would go on for 10 s; cancelled, it ends at once as a failure.
    await expect.poll(failures, { timeout: 5000 }).toBe(before + 1);
  });

  const stats = () => fx.server.statistics('repeat').model_stats[0]!.inference_stats;
  const open = (write: (socket: ReturnType<typeof connect>) => void) => {
    const socket = connect(fx.frontend.port, '127.0.0.1', () => write(socket));
    socket.on('error', () => {});
    return socket;
  };

  it('cancels every stream of a client that disconnects, those of requests pipelined behind the first too', async () => {
    const before = stats();
    const body = JSON.stringify({ IN: 1, count: 1000, interval_ms: 10 });
    const request = `POST /v2/models/repeat/generate_stream HTTP/1.1\r\nHost: test\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const socket = open((s) => s.write(request.repeat(2)));
    await sleep(100);
    socket.destroy();
    await expect.poll(() => stats().fail.count - before.fail.count, { timeout: 5000 }).toBe(2);
  });

  it('cancels the stream of a client that left while its (compressed) body was still being read', async () => {
    const before = stats();
    const body = gzipSync(JSON.stringify({ IN: 1, count: 100, interval_ms: 10, pad: 'x'.repeat(60_000_000) }));
    const head = `POST /v2/models/repeat/generate_stream HTTP/1.1\r\nHost: test\r\nContent-Length: ${body.length}\r\nContent-Encoding: gzip\r\n\r\n`;
    await new Promise<void>((resolve) => {
      const socket = open((s) => {
        s.write(head);
        s.write(body, () => setTimeout(() => {
          socket.destroy();
          resolve();
        }, 5));
      });
    });
    // Uncancelled, the stream would end as a success after a second.
    await sleep(2000);
    expect(stats().success.count).toBe(before.success.count);
  });
});

