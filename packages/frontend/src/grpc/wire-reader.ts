import { invalid } from '../wire-values.js';

/** Protobuf's wire types that tensor contents use. */
export const WIRE_TYPE = { varint: 0, fixed64: 1, lengthDelimited: 2, fixed32: 5 } as const;

/**
 * Reads protobuf's wire format from a byte range, without allocating: varints as two
 * 32-bit halves (so that 64-bit values need no Long or BigInt each), lengths checked
 * against the range. `what` names the message in errors.
 */
export class WireReader {
  /** The high 32 bits of the last varint read. */
  high = 0;

  constructor(
    private readonly bytes: Uint8Array,
    public pos: number,
    readonly end: number,
    private readonly what: string,
  ) {}

  get done(): boolean {
    return this.pos >= this.end;
  }

  /** The next varint's low 32 bits (unsigned); its high 32 bits are left in `high`. */
  varint(): number {
    const bytes = this.bytes;
    let low = 0;
    let high = 0;
    let byte: number;
    let index = 0;
    do {
      // As protobuf: a 64-bit value takes at most 10 bytes (a negative int32 too).
      if (index === 10) throw this.malformed('a varint runs past 10 bytes');
      if (this.pos >= this.end) throw this.malformed('a varint runs past the end');
      byte = bytes[this.pos++]!;
      if (index < 4) low |= (byte & 0x7f) << (7 * index);
      else if (index === 4) {
        low |= (byte & 0x0f) << 28;
        high = (byte & 0x7f) >> 4;
      } else high |= (byte & 0x7f) << (7 * index - 32);
      index++;
    } while (byte & 0x80);
    this.high = high >>> 0;
    return low >>> 0;
  }

  /** A length-delimited field's length, checked to fit in what is left. */
  length(): number {
    const length = this.varint();
    if (this.high !== 0 || length > this.end - this.pos) throw this.malformed('a length runs past the end');
    return length;
  }

  /** Steps over one value of `wireType`. */
  skip(wireType: number): void {
    if (wireType === WIRE_TYPE.varint) {
      this.varint();
    } else if (wireType === WIRE_TYPE.lengthDelimited) {
      const length = this.length();
      this.pos += length;
    } else if (wireType === WIRE_TYPE.fixed64 || wireType === WIRE_TYPE.fixed32) {
      const size = wireType === WIRE_TYPE.fixed64 ? 8 : 4;
      if (size > this.end - this.pos) throw this.malformed('a fixed-size value runs past the end');
      this.pos += size;
    } else {
      throw this.malformed(`wire type ${wireType} is not expected here`);
    }
  }

  malformed(why: string) {
    return invalid(`${this.what} are malformed: ${why}`);
  }
}

/** How many varints fill bytes[start, end): each ends at a byte without the continuation bit. */
export function countVarints(bytes: Uint8Array, start: number, end: number): number {
  let count = 0;
  for (const byte of bytes.subarray(start, end)) if ((byte & 0x80) === 0) count++;
  return count;
}
