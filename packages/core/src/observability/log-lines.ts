import { openSync, writeSync } from 'node:fs';
import type { LogFormat } from './log-settings.js';

/** Triton's level letters. */
export type LogLevelLetter = 'E' | 'W' | 'I' | 'V';

/** Microseconds since the epoch, from the high-resolution clock. */
export const epochMicros = (): number => Math.floor((performance.timeOrigin + performance.now()) * 1000);

/**
 * One log line as Triton writes it (UTC): `LMMDD hh:mm:ss.uuuuuu pid tritium] message`
 * by default, `YYYY-MM-DDThh:mm:ssZ L pid tritium] message` for ISO8601; `tritium`
 * stands where Triton names its source file.
 */
export function logLine(format: LogFormat, level: LogLevelLetter, micros: number, message: string): string {
  const iso = new Date(Math.floor(micros / 1000)).toISOString();
  // 2024-03-15T19:34:17.024Z -> I0315 19:34:17.024361
  const prefix =
    format === 'ISO8601'
      ? `${iso.slice(0, 19)}Z ${level}`
      : `${level}${iso.slice(5, 7)}${iso.slice(8, 10)} ${iso.slice(11, 19)}.${String(micros % 1_000_000).padStart(6, '0')}`;
  return `${prefix} ${process.pid} tritium] ${message}`;
}

/** Where lines go: appended to `file`, else standard error (Triton's console). Written synchronously, so an exit loses none. */
export function logDestination(file: string): (line: string) => void {
  if (file === '') return (line) => process.stderr.write(`${line}\n`);
  const fd = openSync(file, 'a');
  return (line) => writeSync(fd, `${line}\n`);
}
