/** One field of a serialized protobuf message: a varint, or length-delimited bytes. */
export type ProtoField =
  | { readonly number: number; readonly wireType: 0; readonly value: number }
  | { readonly number: number; readonly wireType: 2; readonly bytes: Uint8Array };

/**
 * The varint and length-delimited fields of a serialized protobuf message, in order
 * (fixed-width fields are skipped). Throws on malformed input. Varints above 2^53
 * lose precision, which is fine for the enums and lengths they are read for here.
 */
export function* protoFields(message: Uint8Array): Generator<ProtoField> {
  let p = 0;
  const varint = (): number => {
    let value = 0;
    for (let scale = 1; scale < 2 ** 64; scale *= 128) {
      if (p >= message.length) throw new Error('truncated varint');
      const byte = message[p++]!;
      value += (byte & 0x7f) * scale;
      if ((byte & 0x80) === 0) return value;
    }
    throw new Error('varint longer than 10 bytes');
  };
  const skip = (length: number): number => {
    if (p + length > message.length) throw new Error('field runs past the end of the message');
    const start = p;
    p += length;
    return start;
  };
  while (p < message.length) {
    const key = varint();
    const number = Math.floor(key / 8);
    const wireType = key % 8;
    if (wireType === 0) {
      yield { number, wireType, value: varint() };
    } else if (wireType === 2) {
      const length = varint();
      const start = skip(length);
      yield { number, wireType, bytes: message.subarray(start, start + length) };
    } else if (wireType === 1) {
      skip(8);
    } else if (wireType === 5) {
      skip(4);
    } else {
      throw new Error(`unsupported wire type ${wireType}`);
    }
  }
}
