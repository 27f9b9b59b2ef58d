import { status } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_LOG_SETTINGS, type Logger } from '@tritium/core';
import { expectStatus, useGrpcFixture } from './helpers/grpc-fixture.js';
import { SIMPLE } from './helpers/grpc-models.js';
import { startHttpFixture, type HttpFixture } from './helpers/http-fixture.js';
import { simpleModel } from './helpers/http-models.js';

/** A Logger that keeps nothing: the tests read the settings, not the lines. */
const quiet: Logger = { error: () => {}, warn: () => {}, info: () => {}, verbose: () => {} };

describe('HTTP /v2/logging', () => {
  let fx: HttpFixture | undefined;
  afterEach(async () => {
    await fx?.stop();
    fx = undefined;
  });

  const post = (body: string) => fetch(`${fx!.url}/v2/logging`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

  it("answers the settings on GET, and on POST changes those given and answers them all, in Triton's order", async () => {
    fx = await startHttpFixture({ simple: simpleModel }, { server: { logger: quiet } });
    const got = await fetch(`${fx.url}/v2/logging`);
    expect([got.status, got.headers.get('content-type'), await got.text()]).toEqual([
      200,
      'application/json',
      '{"log_file":"","log_info":true,"log_warning":true,"log_error":true,"log_verbose_level":0,"log_format":"default"}',
    ]);
    const changed = await post('{"log_verbose_level":1,"log_info":false,"log_format":"ISO8601"}');
    expect([changed.status, await changed.json()]).toEqual([200, { ...DEFAULT_LOG_SETTINGS, log_verbose_level: 1, log_info: false, log_format: 'ISO8601' }]);
    // An empty body and null settings change nothing, as in Triton.
    expect(await (await post('')).json()).toEqual(fx.server.logSettings());
    expect(await (await post('{"log_info":null,"log_file":null}')).json()).toEqual(fx.server.logSettings());
    expect(fx.server.logSettings().log_verbose_level).toBe(1);
  });

  it('refuses a bad setting with 400 naming the field (log_file with 501), changing nothing', async () => {
    fx = await startHttpFixture({ simple: simpleModel }, { server: { logger: quiet } });
    const cases: Array<[string, number, RegExp]> = [
      ['{"log_verbose_level":-1}', 400, /'log_verbose_level' must be an integer from 0 to 2\^31-1, got -1/],
      ['{"log_verbose_level":"2"}', 400, /'log_verbose_level' must be an integer/],
      ['{"log_format":"json"}', 400, /'log_format' must be 'default' or 'ISO8601', got 'json'/],
      ['{"log_info":"false"}', 400, /'log_info' must be a boolean/],
      ['{"log_error":false,"log_level":1}', 400, /unknown log setting 'log_level'/],
      ['{"log_file":"/tmp/x.log"}', 501, /'log_file' can not be updated/],
      ['[1]', 400, /the log settings JSON must be an object/],
      ['{', 400, /failed to parse the log settings JSON/],
    ];
    for (const [body, code, message] of cases) {
      const res = await post(body);
      expect([body, res.status, ((await res.json()) as { error: string }).error]).toEqual([body, code, expect.stringMatching(message)]);
    }
    expect(fx.server.logSettings()).toEqual(DEFAULT_LOG_SETTINGS);
  });

  it('takes GET and POST only', async () => {
    fx = await startHttpFixture({ simple: simpleModel }, { server: { logger: quiet } });
    const res = await fetch(`${fx.url}/v2/logging`, { method: 'PUT' });
    expect([res.status, res.headers.get('allow')]).toEqual([405, 'GET, POST']);
    expect((await fetch(`${fx.url}/v2/logging/x`)).status).toBe(404);
  });
});

describe('gRPC LogSettings', () => {
  const fx = useGrpcFixture();

  it('answers the settings as SettingValues, and changes those a request names', async () => {
    const client = await fx.start({ simple: SIMPLE }, { logger: quiet });
    expect(await client.call('LogSettings', {})).toEqual({
      settings: {
        log_file: { parameter_choice: 'string_param', string_param: '' },
        log_info: { parameter_choice: 'bool_param', bool_param: true },
        log_warning: { parameter_choice: 'bool_param', bool_param: true },
        log_error: { parameter_choice: 'bool_param', bool_param: true },
        log_verbose_level: { parameter_choice: 'uint32_param', uint32_param: 0 },
        log_format: { parameter_choice: 'string_param', string_param: 'default' },
      },
    });
    const changed = await client.call('LogSettings', { settings: { log_verbose_level: { uint32_param: 2 }, log_warning: { bool_param: false }, log_format: { string_param: 'ISO8601' } } });
    expect(changed.settings.log_verbose_level).toEqual({ parameter_choice: 'uint32_param', uint32_param: 2 });
    expect(fx.server!.logSettings()).toEqual({ ...DEFAULT_LOG_SETTINGS, log_verbose_level: 2, log_warning: false, log_format: 'ISO8601' });
  });

  it('refuses a setting of the wrong type or value with INVALID_ARGUMENT naming it, and log_file with UNIMPLEMENTED', async () => {
    const client = await fx.start({ simple: SIMPLE }, { logger: quiet });
    await expectStatus(client.call('LogSettings', { settings: { log_info: { string_param: 'true' } } }), status.INVALID_ARGUMENT, /^log setting 'log_info' must be a boolean, got 'true'$/);
    await expectStatus(client.call('LogSettings', { settings: { log_verbose_level: { bool_param: true } } }), status.INVALID_ARGUMENT, /'log_verbose_level' must be an integer/);
    await expectStatus(client.call('LogSettings', { settings: { log_format: { string_param: 'json' } } }), status.INVALID_ARGUMENT, /'log_format' must be 'default' or 'ISO8601'/);
    await expectStatus(client.call('LogSettings', { settings: { verbose: { uint32_param: 1 } } }), status.INVALID_ARGUMENT, /unknown log setting 'verbose'/);
    await expectStatus(client.call('LogSettings', { settings: { log_info: {} } }), status.INVALID_ARGUMENT, /'log_info' has no value set/);
    await expectStatus(client.call('LogSettings', { settings: { log_file: { string_param: '' } } }), status.UNIMPLEMENTED, /'log_file' can not be updated/);
    expect(fx.server!.logSettings()).toEqual(DEFAULT_LOG_SETTINGS);
  });
});
