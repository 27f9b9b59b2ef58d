import { corruptModel } from './model-error.js';

/*
 * A UBJSON decoder (ubjson.org, draft 12), as XGBoost writes its .ubj models:
 * big-endian numbers, object keys without the 'S' marker, and optimized containers
 * ('$' element type, '#' count) for its typed arrays.
 */

const INT_SIZES: Readonly<Record<string, number>> = { i: 1, U: 1, I: 2, l: 4, L: 8 };
/** XGBoost's documents nest a few levels; far deeper is a damaged file, refused before the stack runs out. */
const MAX_DEPTH = 64;

export function decodeUbjson(bytes: Uint8Array, file: string): unknown {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const text = new TextDecoder();
  let offset = 0;
  let depth = 0;
  const take = (n: number) => {
    if (offset + n > bytes.length) throw corruptModel(file, 'it ends inside a UBJSON value (truncated, or not UBJSON)');
    const at = offset;
    offset += n;
    return at;
  };
  const marker = () => String.fromCharCode(bytes[take(1)]!);

  const scalar = (type: string): unknown => {
    switch (type) {
      case 'Z': return null;
      case 'T': return true;
      case 'F': return false;
      case 'i': return view.getInt8(take(1));
      case 'U': return view.getUint8(take(1));
      case 'I': return view.getInt16(take(2));
      case 'l': return view.getInt32(take(4));
      case 'L': return Number(view.getBigInt64(take(8)));
      case 'd': return view.getFloat32(take(4));
      case 'D': return view.getFloat64(take(8));
      case 'C': return String.fromCharCode(bytes[take(1)]!);
      case 'S': return string();
      case 'H': return Number(string());
      case '[': return nested(array);
      case '{': return nested(object);
      default: throw corruptModel(file, `it holds an unknown UBJSON type '${type}' at byte ${offset - 1}`);
    }
  };
  const nested = (container: () => unknown) => {
    if (++depth > MAX_DEPTH) throw corruptModel(file, `its UBJSON containers nest more than ${MAX_DEPTH} deep`);
    const value = container();
    depth--;
    return value;
  };
  const length = () => {
    const type = marker();
    if (!(type in INT_SIZES)) throw corruptModel(file, `a UBJSON length has type '${type}', not an integer`);
    const n = scalar(type) as number;
    if (n < 0 || n > bytes.length) throw corruptModel(file, `a UBJSON length is ${n}`);
    return n;
  };
  const string = () => {
    const n = length();
    const at = take(n);
    return text.decode(bytes.subarray(at, at + n));
  };
  /** The optimized container header, if any: element type and count. */
  const header = (): { type?: string; count?: number } => {
    let type: string | undefined;
    if (bytes[offset] === 0x24 /* $ */) {
      take(1);
      type = marker();
    }
    if (bytes[offset] === 0x23 /* # */) {
      take(1);
      return { type, count: length() };
    }
    if (type) throw corruptModel(file, "a UBJSON container gives its type without '#' count");
    return {};
  };
  const elements = (close: number, each: (type: string) => void) => {
    const { type, count } = header();
    if (count !== undefined) {
      for (let i = 0; i < count; i++) each(type ?? marker());
      return;
    }
    while (bytes[offset] !== close) {
      if (offset >= bytes.length) throw corruptModel(file, 'a UBJSON container is not closed (truncated)');
      const t = marker();
      if (t !== 'N') each(t);
    }
    take(1);
  };
  const array = () => {
    const values: unknown[] = [];
    elements(0x5d /* ] */, (type) => values.push(scalar(type)));
    return values;
  };
  const object = () => {
    const values: Record<string, unknown> = {};
    // Keys come first, without a marker; the element type (if any) applies to values.
    const { type, count } = header();
    const entry = (t: string | undefined) => {
      const key = string();
      values[key] = scalar(t ?? marker());
    };
    if (count !== undefined) {
      for (let i = 0; i < count; i++) entry(type);
    } else {
      while (bytes[offset] !== 0x7d /* } */) {
        if (offset >= bytes.length) throw corruptModel(file, 'a UBJSON object is not closed (truncated)');
        entry(undefined);
      }
      take(1);
    }
    return values;
  };

  const value = scalar(marker());
  if (offset !== bytes.length) throw corruptModel(file, `it has ${bytes.length - offset} bytes after its UBJSON value`);
  return value;
}
