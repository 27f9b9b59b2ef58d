import { InferenceError } from '@tritium/core/backend';

/** A model file that cannot be read: names the file and what is wrong in it. */
export function corruptModel(file: string, problem: string): InferenceError {
  return new InferenceError('INVALID_ARG', `FIL model file '${file}' is invalid: ${problem}`);
}

/** A model file that is valid but uses something this backend does not evaluate. */
export function unsupportedModel(file: string, what: string): InferenceError {
  return new InferenceError('UNSUPPORTED', `FIL model file '${file}': ${what}`);
}

/** Parses a number as the formats write them (C's printf, with inf and nan spelled out). */
export function parseNumber(token: string, file: string, what: string): number {
  const t = token.trim().toLowerCase();
  if (t === 'inf' || t === '+inf' || t === 'infinity') return Infinity;
  if (t === '-inf' || t === '-infinity') return -Infinity;
  if (t === 'nan' || t === '-nan') return NaN;
  const n = t === '' ? NaN : Number(t);
  if (Number.isNaN(n)) throw corruptModel(file, `${what} '${token}' is not a number`);
  return n;
}
