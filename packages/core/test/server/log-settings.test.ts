import { describe, expect, it } from 'vitest';
import { DEFAULT_LOG_SETTINGS, ServerLogger } from '@tritium/core';
import { testConfig } from '../helpers/repository.js';
import { rejection, useServerFixture } from '../helpers/server-fixture.js';
import { recordingLogger as recording } from '../helpers/recording-logger.js';

const fx = useServerFixture();
const MODELS = { m: { config: testConfig({}) } };
const request = { inputs: { INPUT0: { datatype: 'FP32' as const, shape: [4], data: new Float32Array(4) } } };

describe('server.logSettings() and updateLogSettings()', () => {
  it("answers Triton's defaults, changes what is given, reports the logging extension, and refuses bad values naming the field", async () => {
    const server = await fx.start(MODELS, { logger: recording() });
    expect(server.logSettings()).toEqual(DEFAULT_LOG_SETTINGS);
    expect(server.metadata().extensions).toContain('logging');
    expect(server.updateLogSettings({ log_verbose_level: 2, log_format: 'ISO8601' })).toEqual({ ...DEFAULT_LOG_SETTINGS, log_verbose_level: 2, log_format: 'ISO8601' });
    expect(server.updateLogSettings({})).toEqual(server.logSettings());
    const refused = [
      [{ log_verbose_level: -1 }, /'log_verbose_level' must be an integer/],
      [{ log_format: 'json' }, /'log_format' must be 'default' or 'ISO8601', got 'json'/],
      [{ log_info: 1 }, /'log_info' must be a boolean, got 1/],
      [{ verbose: 1 }, /unknown log setting 'verbose'/],
    ] as const;
    for (const [changes, message] of refused) {
      const error = await rejection(Promise.resolve().then(() => server.updateLogSettings(changes as never)));
      expect([error.code, error.message]).toEqual(['INVALID_ARG', expect.stringMatching(message)]);
    }
    expect((await rejection(Promise.resolve().then(() => server.updateLogSettings({ log_file: 'x.log' })))).code).toBe('UNSUPPORTED');
    expect(server.logSettings().log_verbose_level).toBe(2);
  });

  it("filters an application's own Logger by the settings: level 1 shows load steps, level 2 each request too", async () => {
    const sink = recording();
    const server = await fx.start(MODELS, { logger: sink, modelControlMode: 'explicit', startupModels: ['m'] });
    expect(sink.lines.filter((line) => line.startsWith('V'))).toEqual([]);
    await server.unloadModel('m');
    server.updateLogSettings({ log_verbose_level: 1 });
    await server.loadModel('m');
    await server.infer('m', request);
    const loadLines = sink.lines.filter((line) => line.startsWith('V'));
    expect(loadLines).toEqual([
      expect.stringMatching(/^V model 'm' version 1: loading with backend 'test', instances m_0_0 \(KIND_CPU\)$/),
      "V model 'm' version 1: 1 instance(s) created",
      expect.stringMatching(/^V model 'm' version 1: scheduled by DefaultScheduler; loaded in [\d.]+ ms$/),
    ]);
    server.updateLogSettings({ log_verbose_level: 2 });
    await server.infer('m', { ...request, id: 'r1' });
    await server.unloadModel('m');
    expect(sink.lines.slice(loadLines.length)).toEqual([
      "V model 'm' version 1 request 'r1': accepted (batch size 1)",
      "V model 'm' version 1 request 'r1': done",
      "V model 'm' version 1: unloading, 0 request(s) in flight",
      "V model 'm' version 1: unloaded",
    ]);
  });

  it('takes a ServerLogger as it is: its settings are the server’s, both ways', async () => {
    const sink = recording();
    const logger = new ServerLogger({ sink, settings: { log_info: false } });
    const server = await fx.start(MODELS, { logger });
    expect(server.logSettings()).toBe(logger.settings);
    server.updateLogSettings({ log_info: true });
    logger.info('shown');
    expect(sink.lines).toEqual(['I shown']);
  });
});
