import { invalid } from './wire-values.js';

/** A frontend's integer option (`frontend` names it in the message, e.g. "HTTP frontend"), from `min` to `max`. */
export function integerOption(frontend: string, option: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw invalid(`${frontend} option \`${option}\` must be an integer from ${min} to ${max}, got ${String(value)}`);
  }
  return value;
}
