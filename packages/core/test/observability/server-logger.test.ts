import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LOG_SETTINGS, InferenceError, ServerLogger } from '@tritium/core';
import { logLine } from '../../src/observability/log-lines.js';
import { recordingLogger as recording } from '../helpers/recording-logger.js';

// 2024-03-15T19:34:17.024361Z
const AT = Date.UTC(2024, 2, 15, 19, 34, 17) * 1000 + 24_361;

function everyLevel(logger: ServerLogger): void {
  logger.error('e');
  logger.warn('w');
  logger.info('i');
  logger.verbose('v1');
  logger.verbose('v2', 2);
}

function refusal(action: () => unknown): InferenceError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(InferenceError);
    return error as InferenceError;
  }
  throw new Error('expected a refusal');
}

describe('logLine', () => {
  it("prefixes lines as Triton's default format does, in UTC with microseconds", () => {
    expect(logLine('default', 'I', AT, 'm')).toBe(`I0315 19:34:17.024361 ${process.pid} tritium] m`);
  });

  it('prefixes lines as ISO8601 when asked', () => {
    expect(logLine('ISO8601', 'W', AT, 'm')).toBe(`2024-03-15T19:34:17Z W ${process.pid} tritium] m`);
  });
});

describe('ServerLogger', () => {
  it("starts from Triton's defaults: every level but verbose", () => {
    const sink = recording();
    const logger = new ServerLogger({ sink });
    expect(logger.settings).toEqual(DEFAULT_LOG_SETTINGS);
    everyLevel(logger);
    expect(sink.lines).toEqual(['E e', 'W w', 'I i']);
  });

  it('drops the levels turned off, and verbose messages above the level, as soon as the settings change', () => {
    const sink = recording();
    const logger = new ServerLogger({ sink, settings: { log_verbose_level: 1 } });
    everyLevel(logger);
    expect(logger.update({ log_info: false, log_warning: false, log_verbose_level: 2 })).toEqual({ ...DEFAULT_LOG_SETTINGS, log_info: false, log_warning: false, log_verbose_level: 2 });
    everyLevel(logger);
    logger.update({ log_error: false, log_verbose_level: 0 });
    everyLevel(logger);
    expect(sink.lines).toEqual(['E e', 'W w', 'I i', 'V v1', 'E e', 'V v1', 'V v2']);
    expect(logger.isVerbose(1)).toBe(false);
    logger.update({ log_verbose_level: 1 });
    expect([logger.isVerbose(1), logger.isVerbose(2)]).toEqual([true, false]);
  });

  it('refuses a bad setting whole, naming the field, and keeps the settings as they were', () => {
    const logger = new ServerLogger({ sink: recording() });
    const cases: Array<[unknown, string]> = [
      [{ log_verbose_level: -1 }, "log setting 'log_verbose_level' must be an integer from 0 to 2^31-1, got -1"],
      [{ log_verbose_level: 1.5 }, "log setting 'log_verbose_level' must be an integer from 0 to 2^31-1, got 1.5"],
      [{ log_format: 'json' }, "log setting 'log_format' must be 'default' or 'ISO8601', got 'json'"],
      [{ log_info: 'true' }, "log setting 'log_info' must be a boolean, got 'true'"],
      [{ log_error: true, log_warning: 1 }, "log setting 'log_warning' must be a boolean, got 1"],
      [{ log_info: false, log_level: 2 }, "unknown log setting 'log_level' (known: log_file, log_info, log_warning, log_error, log_verbose_level, log_format)"],
      [[], 'log settings must be an object'],
    ];
    for (const [changes, message] of cases) {
      const error = refusal(() => logger.update(changes as never));
      expect([error.code, error.message]).toEqual(['INVALID_ARG', message]);
    }
    const file = refusal(() => logger.update({ log_file: '/tmp/other.log' }));
    expect([file.code, file.message]).toEqual(['UNSUPPORTED', "log setting 'log_file' can not be updated: the log file is chosen when the logger is made"]);
    expect(logger.settings).toEqual(DEFAULT_LOG_SETTINGS);
    expect(refusal(() => new ServerLogger({ settings: { log_format: 'xml' as never } })).message).toMatch(/'log_format'/);
  });

  it("writes Triton's lines to log_file in the format set at the time of each", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tritium-log-'));
    try {
      const file = join(dir, 'server.log');
      const logger = new ServerLogger({ settings: { log_file: file } });
      logger.info('first');
      logger.update({ log_format: 'ISO8601' });
      logger.warn('second');
      const lines = (await readFile(file, 'utf8')).split('\n');
      expect(lines[0]).toMatch(new RegExp(`^I\\d{4} \\d\\d:\\d\\d:\\d\\d\\.\\d{6} ${process.pid} tritium\\] first$`));
      expect(lines[1]).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ W ${process.pid} tritium\\] second$`));
      expect(lines[2]).toBe('');
      expect(logger.settings.log_file).toBe(file);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('is recognized across copies of core by its brand, as InferenceError is', () => {
    expect(new ServerLogger({ sink: recording() })).toBeInstanceOf(ServerLogger);
    expect(recording()).not.toBeInstanceOf(ServerLogger);
  });
});
