/*
 * The proto integer types. Tritium holds them all as JS numbers: 64-bit values are exact
 * up to 2^53 and the nearest double beyond (e.g. a uint64 max written to mean "no limit").
 */

export type ProtoIntegerType = 'int32' | 'uint32' | 'int64' | 'uint64';

export const INTEGER_RANGES: Readonly<Record<ProtoIntegerType, readonly [bigint, bigint]>> = {
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
};

/**
 * The decimal digits of an integer value, clamped to its type's range: the double
 * nearest a 64-bit maximum lies just above it, and must print as that maximum.
 */
export function integerText(type: ProtoIntegerType, value: number): string {
  const [min, max] = INTEGER_RANGES[type];
  const exact = BigInt(value);
  return String(exact < min ? min : exact > max ? max : exact);
}
