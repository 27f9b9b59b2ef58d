/**
 * IEEE 754 half (FP16) and bfloat16 (BF16) conversions on raw 16-bit patterns,
 * the form FP16/BF16 tensor data takes. Rounding is to nearest, ties to even.
 * The encoders work on float32 bits, so a Float32Array converts without going
 * through numbers (which would not keep NaN payloads).
 */

// One scratch word to read a number's float32 bits and back without allocating.
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/**
 * Rounds `kept` (the truncated bits) to nearest, ties to even. `rest` is the dropped
 * bits and `half` their value at exactly halfway. `excess` is how far the original
 * number lay beyond its float32 in magnitude (0 for a float32): storing a non-float32
 * number already rounded it once, so an apparent tie is decided by that excess, and
 * the result is as if the number itself had been rounded once.
 */
function round(kept: number, rest: number, half: number, excess: number): number {
  if (rest !== half) return rest > half ? kept + 1 : kept;
  if (excess !== 0) return excess > 0 ? kept + 1 : kept;
  return kept + (kept & 1);
}

function float32BitsToFp16(bits: number, excess: number): number {
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  const mantissa = bits & 0x7fffff;
  if (exponent === 0xff) return mantissa === 0 ? sign | 0x7c00 : sign | 0x7e00 | (mantissa >>> 13);
  const halfExponent = exponent - 112; // rebias 127 -> 15
  if (halfExponent >= 0x1f) return sign | 0x7c00;
  if (halfExponent <= 0) {
    // Subnormal half: the value in units of 2^-24, from the float's full significand.
    if (halfExponent < -10) return sign; // below half the smallest subnormal
    const significand = mantissa | 0x800000;
    const shift = 14 - halfExponent;
    return sign | round(significand >>> shift, significand & ((1 << shift) - 1), 1 << (shift - 1), excess);
  }
  // A carry out of the mantissa lands in the exponent, up to Infinity, as it should.
  return sign | round((halfExponent << 10) | (mantissa >>> 13), mantissa & 0x1fff, 0x1000, excess);
}

function float32BitsToBf16(bits: number, excess: number): number {
  const upper = bits >>> 16;
  // Truncating could turn a NaN with only low payload bits into Infinity: set the quiet bit.
  if ((bits & 0x7fffffff) > 0x7f800000) return upper | 0x0040;
  return round(upper, bits & 0xffff, 0x8000, excess);
}

/** Stores `x` in the scratch float32; returns how far `x` lay beyond it in magnitude. */
function storeFloat32(x: number): number {
  f32[0] = x;
  return Math.abs(x) - Math.abs(f32[0]!);
}

/** Any number to FP16 bits, rounded once; out of range gives ±Infinity, NaN stays NaN. */
export function float32ToFp16Bits(x: number): number {
  const excess = storeFloat32(x);
  return float32BitsToFp16(u32[0]!, excess);
}

/** Any number to BF16 bits (the top half of a float32), rounded once; NaN stays NaN. */
export function float32ToBf16Bits(x: number): number {
  const excess = storeFloat32(x);
  return float32BitsToBf16(u32[0]!, excess);
}

/** FP16 bits to the float32 bits of the same value (exact: every half is a float32). */
function fp16ToFloat32Bits(h: number): number {
  const sign = (h & 0x8000) << 16;
  const exponent = (h >>> 10) & 0x1f;
  let mantissa = h & 0x3ff;
  if (exponent === 0x1f) return sign | 0x7f800000 | (mantissa << 13);
  if (exponent !== 0) return sign | ((exponent + 112) << 23) | (mantissa << 13);
  if (mantissa === 0) return sign;
  // Subnormal half: normalize, as float32 has the exponent range to hold it.
  let floatExponent = 113;
  while ((mantissa & 0x400) === 0) {
    mantissa <<= 1;
    floatExponent--;
  }
  return sign | (floatExponent << 23) | ((mantissa & 0x3ff) << 13);
}

export function fp16BitsToFloat32(bits: number): number {
  u32[0] = fp16ToFloat32Bits(bits);
  return f32[0]!;
}

/** BF16 is the top half of a float32. */
function bf16ToFloat32Bits(h: number): number {
  return h << 16;
}

export function bf16BitsToFloat32(bits: number): number {
  u32[0] = bf16ToFloat32Bits(bits);
  return f32[0]!;
}

/** Encodes values with `fromBits`, reading a Float32Array's bits directly. */
function encode(
  values: Float32Array | ArrayLike<number>,
  fromBits: (bits: number, excess: number) => number,
  fromNumber: (x: number) => number,
): Uint16Array {
  const out = new Uint16Array(values.length);
  if (values instanceof Float32Array) {
    const bits = new Uint32Array(values.buffer, values.byteOffset, values.length);
    for (let i = 0; i < bits.length; i++) out[i] = fromBits(bits[i]!, 0);
  } else {
    for (let i = 0; i < values.length; i++) out[i] = fromNumber(values[i]!);
  }
  return out;
}

export function toFp16(values: Float32Array | ArrayLike<number>): Uint16Array {
  return encode(values, float32BitsToFp16, float32ToFp16Bits);
}

export function toBf16(values: Float32Array | ArrayLike<number>): Uint16Array {
  return encode(values, float32BitsToBf16, float32ToBf16Bits);
}

/** Decodes 16-bit patterns, writing float32 bits so NaN payloads survive. */
function decode(bits: Uint16Array, toFloat32Bits: (h: number) => number): Float32Array {
  const out = new Float32Array(bits.length);
  const outBits = new Uint32Array(out.buffer);
  for (let i = 0; i < bits.length; i++) outBits[i] = toFloat32Bits(bits[i]!);
  return out;
}

export function fromFp16(bits: Uint16Array): Float32Array {
  return decode(bits, fp16ToFloat32Bits);
}

export function fromBf16(bits: Uint16Array): Float32Array {
  return decode(bits, bf16ToFloat32Bits);
}
