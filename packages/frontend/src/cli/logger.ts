import { openSync, writeSync } from 'node:fs';
import type { Logger } from '@tritium/core';
import type { LogSettings } from './arguments.js';

type Level = 'E' | 'W' | 'I' | 'V';

/** Microseconds since the epoch, from the high-resolution clock. */
const epochMicros = (): number => Math.floor((performance.timeOrigin + performance.now()) * 1000);

/**
 * The command's Logger, with Triton's line prefixes (UTC): `LMMDD hh:mm:ss.uuuuuu pid`
 * by default, `YYYY-MM-DDThh:mm:ssZ L pid` for ISO8601. Each level can be turned off;
 * verbose messages show from --log-verbose=1 up.
 */
export function commandLogger(settings: LogSettings, write: (line: string) => void, now: () => number = epochMicros): Logger {
  const line = (level: Level, message: string) => write(`${prefix(settings.format, level, now())} ${process.pid} tritium] ${message}`);
  const off = () => {};
  return {
    error: settings.error ? (message) => line('E', message) : off,
    warn: settings.warning ? (message) => line('W', message) : off,
    info: settings.info ? (message) => line('I', message) : off,
    verbose: settings.verbose > 0 ? (message) => line('V', message) : off,
  };
}

function prefix(format: LogSettings['format'], level: Level, micros: number): string {
  const iso = new Date(Math.floor(micros / 1000)).toISOString();
  if (format === 'ISO8601') return `${iso.slice(0, 19)}Z ${level}`;
  // 2024-03-15T19:34:17.024Z -> I0315 19:34:17.024361
  return `${level}${iso.slice(5, 7)}${iso.slice(8, 10)} ${iso.slice(11, 19)}.${String(micros % 1_000_000).padStart(6, '0')}`;
}

/** Where lines go: appended to `file`, else standard error (Triton's console). Written synchronously, so an exit loses none. */
export function logDestination(file: string | undefined): (line: string) => void {
  if (file === undefined) return (line) => process.stderr.write(`${line}\n`);
  const fd = openSync(file, 'a');
  return (line) => writeSync(fd, `${line}\n`);
}
