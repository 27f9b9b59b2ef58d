/** Triton keeps these settings in 32-bit integers. */
export const UINT32_MAX = 2 ** 32 - 1;
export const INT32_MAX = 2 ** 31 - 1;

/** Whether a setting's `value` is an integer from `min` to `max`. */
export function isIntegerIn(value: unknown, min: number, max: number): value is number {
  return Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max;
}
