import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LogSettings } from '../src/cli/arguments.js';
import { commandLogger, logDestination } from '../src/cli/logger.js';

const ALL: LogSettings = { info: true, warning: true, error: true, verbose: 1, format: 'default' };
// 2024-03-15T19:34:17.024361Z
const AT = Date.UTC(2024, 2, 15, 19, 34, 17) * 1000 + 24_361;

function logged(settings: LogSettings): string[] {
  const lines: string[] = [];
  const logger = commandLogger(settings, (line) => lines.push(line), () => AT);
  logger.error('e');
  logger.warn('w');
  logger.info('i');
  logger.verbose('v');
  return lines;
}

describe('commandLogger', () => {
  it("prefixes lines as Triton's default format does, in UTC with microseconds", () => {
    expect(logged(ALL)).toEqual(['E', 'W', 'I', 'V'].map((level) => `${level}0315 19:34:17.024361 ${process.pid} tritium] ${level.toLowerCase()}`));
  });

  it('prefixes lines as ISO8601 when asked', () => {
    expect(logged({ ...ALL, format: 'ISO8601' })[2]).toBe(`2024-03-15T19:34:17Z I ${process.pid} tritium] i`);
  });

  it('drops the levels turned off, and verbose messages at level 0', () => {
    expect(logged({ ...ALL, warning: false, info: false, verbose: 0 }).map((line) => line[0])).toEqual(['E']);
    expect(logged({ ...ALL, error: false }).map((line) => line[0])).toEqual(['W', 'I', 'V']);
  });
});

describe('logDestination', () => {
  it('appends lines to a file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tritium-log-'));
    try {
      const file = join(dir, 'server.log');
      logDestination(file)('first');
      logDestination(file)('second');
      expect(await readFile(file, 'utf8')).toBe('first\nsecond\n');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
