import { invalid } from './wire-values.js';

/** A request's version string: empty for the server's choice, else a non-negative integer, as Triton reads it. */
export function modelVersion(text: string | undefined): number | undefined {
  if (!text) return undefined;
  if (/^\d+$/.test(text) && Number.isSafeInteger(Number(text))) return Number(text);
  throw invalid(`failed to get model version from specified version string '${text}'`);
}
