import { describe, expect, it } from 'vitest';
import {
  bf16BitsToFloat32,
  float32ToBf16Bits,
  float32ToFp16Bits,
  fp16BitsToFloat32,
  fromBf16,
  fromFp16,
  toBf16,
  toFp16,
} from '../../src/tensor/index.js';

const ALL_PATTERNS = Uint16Array.from({ length: 0x10000 }, (_, i) => i);

/** toEqual on 65536 elements takes most of a second; this takes a millisecond. */
function expectSameBits(actual: Uint16Array, expected: Uint16Array): void {
  expect(actual.length).toBe(expected.length);
  const i = actual.findIndex((bits, index) => bits !== expected[index]);
  if (i !== -1) expect.fail(`element ${i}: 0x${actual[i]!.toString(16)}, expected 0x${expected[i]!.toString(16)}`);
}

interface Format {
  name: string;
  encode(x: number): number;
  decode(bits: number): number;
  toArray(values: Float32Array | readonly number[]): Uint16Array;
  fromArray(bits: Uint16Array): Float32Array;
  exponentMask: number;
  mantissaMask: number;
  quietBit: number;
}

const FORMATS: Format[] = [
  {
    name: 'FP16',
    encode: float32ToFp16Bits,
    decode: fp16BitsToFloat32,
    toArray: toFp16,
    fromArray: fromFp16,
    exponentMask: 0x7c00,
    mantissaMask: 0x3ff,
    quietBit: 0x200,
  },
  {
    name: 'BF16',
    encode: float32ToBf16Bits,
    decode: bf16BitsToFloat32,
    toArray: toBf16,
    fromArray: fromBf16,
    exponentMask: 0x7f80,
    mantissaMask: 0x7f,
    quietBit: 0x40,
  },
];

describe.each(FORMATS)('$name', (format) => {
  const isNaNBits = (h: number) => (h & format.exponentMask) === format.exponentMask && (h & format.mantissaMask) !== 0;

  it('round-trips all 65536 bit patterns through float32', () => {
    for (const h of ALL_PATTERNS) {
      const value = format.decode(h);
      if (isNaNBits(h)) {
        expect(value).toBeNaN();
        // A NaN's sign and payload through a JS number are up to the engine; NaN it stays.
        expect(isNaNBits(format.encode(value))).toBe(true);
      } else if (format.encode(value) !== h) {
        expect.fail(`${format.name} 0x${h.toString(16)} -> ${value} -> 0x${format.encode(value).toString(16)}`);
      }
    }
  });

  it('array forms agree with the scalar ones and keep NaN payloads', () => {
    const floats = format.fromArray(ALL_PATTERNS);
    for (const h of ALL_PATTERNS) {
      if (!isNaNBits(h) && !Object.is(floats[h], format.decode(h))) expect.fail(`decode 0x${h.toString(16)}`);
    }
    // Bit for bit through a Float32Array, NaNs included (signaling ones come back quiet).
    const quieted = ALL_PATTERNS.map((h) => (isNaNBits(h) ? h | format.quietBit : h));
    expectSameBits(format.toArray(floats), quieted);
    const numbers = Array.from(floats);
    expectSameBits(format.toArray(numbers), Uint16Array.from(numbers, format.encode));
  });

  it('rounds halfway between neighbours to even, and off-halfway to the nearer', () => {
    // Every pair of adjacent finite positive values; their midpoint is a float32.
    // (Between the largest finite value and Infinity: see the known values.)
    const largestFinite = format.exponentMask - 1;
    for (let h = 0; h < largestFinite; h++) {
      const low = format.decode(h);
      const high = format.decode(h + 1);
      const mid = (low + high) / 2;
      const even = h % 2 === 0 ? h : h + 1;
      const below = Math.fround(mid - (mid - low) / 1024);
      const above = Math.fround(mid + (high - mid) / 1024);
      if (format.encode(mid) !== even || format.encode(below) !== h || format.encode(above) !== h + 1) {
        expect.fail(`${format.name} between 0x${h.toString(16)} and 0x${(h + 1).toString(16)}`);
      }
      if (format.encode(-mid) !== (even | 0x8000)) expect.fail(`${format.name} -mid 0x${h.toString(16)}`);
    }
  });

  it('rounds a number that is not a float32 once, not twice', () => {
    // 1 + 1.5 ulp is a tie; a hair either side must not be decided as a tie.
    const ulp = format.decode(format.encode(1) + 1) - 1;
    const tie = 1 + 1.5 * ulp;
    const hair = 2 ** -40;
    expect(Math.fround(tie + hair)).toBe(tie);
    expect(format.encode(tie)).toBe(format.encode(1) + 2);
    expect(format.encode(tie + hair)).toBe(format.encode(1) + 2);
    expect(format.encode(tie - hair)).toBe(format.encode(1) + 1);
    expect(format.encode(-(tie - hair))).toBe((format.encode(1) + 1) | 0x8000);
    expect(format.toArray([tie - hair])).toEqual(new Uint16Array([format.encode(1) + 1]));
  });

  it('keeps signed zeros and infinities, and NaN', () => {
    expect(format.encode(0)).toBe(0);
    expect(format.encode(-0)).toBe(0x8000);
    expect(format.encode(Infinity)).toBe(format.exponentMask);
    expect(format.encode(-Infinity)).toBe(format.exponentMask | 0x8000);
    expect(isNaNBits(format.encode(NaN))).toBe(true);
    expect(Object.is(format.decode(0x8000), -0)).toBe(true);
  });
});

describe('FP16', () => {
  it.each([
    [1, 0x3c00],
    [-2, 0xc000],
    [0.5, 0x3800],
    [0.1, 0x2e66],
    [1 / 3, 0x3555],
    [65504, 0x7bff], // largest finite
    [65519.99, 0x7bff],
    [65520, 0x7c00], // halfway to the next binade rounds to even: Infinity
    [1e10, 0x7c00],
    [-1e10, 0xfc00],
    [2 ** -14, 0x0400], // smallest normal
    [2 ** -24, 0x0001], // smallest subnormal
    [2 ** -25, 0x0000], // half of it: tie to even, zero
    [2 ** -25 + 2 ** -60, 0x0001], // a hair above the tie, decided once
    [1.5 * 2 ** -24, 0x0002], // tie between subnormals 1 and 2: even
    [2.5 * 2 ** -24, 0x0002],
    [2 ** -26, 0x0000],
    [-(2 ** -24), 0x8001],
    [1 + 2 ** -11, 0x3c00], // tie: even
    [1 + 3 * 2 ** -11, 0x3c02], // tie: even
    [2 ** -14 - 2 ** -25, 0x0400], // the largest subnormal rounds up into the normals
  ])('encodes %d', (value, bits) => {
    expect(float32ToFp16Bits(value)).toBe(bits);
  });

  it('decodes known values', () => {
    expect(fp16BitsToFloat32(0x3c00)).toBe(1);
    expect(fp16BitsToFloat32(0x7bff)).toBe(65504);
    expect(fp16BitsToFloat32(0x0001)).toBe(2 ** -24);
    expect(fp16BitsToFloat32(0x03ff)).toBe(1023 * 2 ** -24);
    expect(fp16BitsToFloat32(0x7c00)).toBe(Infinity);
    expect(fp16BitsToFloat32(0xfc00)).toBe(-Infinity);
  });
});

describe('BF16', () => {
  const fromBits = (bits: number) => new Float32Array(new Uint32Array([bits]).buffer)[0]!;

  it.each([
    [1, 0x3f80],
    [-2, 0xc000],
    [Math.PI, 0x4049],
    [0.1, 0x3dcd],
    [1 + 2 ** -8, 0x3f80], // tie: even
    [1 + 3 * 2 ** -8, 0x3f82], // tie: even
    [fromBits(0x7f7fffff), 0x7f80], // float32 max rounds to Infinity
    [fromBits(0x7f7f7fff), 0x7f7f],
    [fromBits(0x00000001), 0x0000], // float32 subnormals round like the rest
    [fromBits(0x00018000), 0x0002],
    [fromBits(0x80008001), 0x8001],
  ])('encodes %d', (value, bits) => {
    expect(float32ToBf16Bits(value)).toBe(bits);
  });

  it('never turns a NaN into Infinity', () => {
    const nan = new Float32Array(new Uint32Array([0x7f800001, 0xff800001, 0x7fc00000]).buffer);
    expect(toBf16(nan)).toEqual(new Uint16Array([0x7fc0, 0xffc0, 0x7fc0]));
  });

  it('decodes known values', () => {
    expect(bf16BitsToFloat32(0x3f80)).toBe(1);
    expect(bf16BitsToFloat32(0x4049)).toBe(3.140625);
    expect(bf16BitsToFloat32(0x7f80)).toBe(Infinity);
  });
});
