import { Buffer } from 'node:buffer';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { FlatTensorValues } from './flat-tensor-values.js';

/**
 * Triton's limit on JSON nesting (HTTP_MAX_JSON_NESTING_DEPTH): a tensor's `data` may
 * hold no value inside 100 arrays (its own counted), and here no other part of a
 * request nests objects and arrays more than 100 deep.
 */
export const MAX_JSON_DEPTH = 100;

/**
 * The most values a request may hold outside tensor data (its members, inputs, shapes,
 * parameters; objects inside tensor data count too): a real request has dozens, while
 * 64 MiB of `{},` would be 22 M objects and gigabytes of heap before anything could
 * refuse them. Tensor elements are bounded by their shapes instead.
 */
export const MAX_JSON_VALUES_OUTSIDE_TENSORS = 100_000;

/** Bytes parsed between turns of the event loop, a few milliseconds' work, so that other clients are served while a large body is parsed. */
export const JSON_SLICE_BYTES = 256 * 1024;

export interface JsonParseOptions {
  /** Whether an object member of this name holds tensor data: its arrays come back as FlatTensorValues, nested ones flattened as read. */
  readonly isTensorData?: (key: string) => boolean;
  /**
   * The error for a key an object already has, or undefined for the parser's own
   * (JsonParseError). `where` says where that object is: `depth` containers hold it
   * (0 at the top), and `parentKey` is its member name when its holder is an object.
   */
  readonly duplicateKey?: (key: string, where: { readonly depth: number; readonly parentKey: string | undefined }) => Error | undefined;
  /** The error for nesting beyond MAX_JSON_DEPTH, or undefined for the parser's own; `topLevelKey`: the top-level member it is in. */
  readonly tooDeep?: (topLevelKey: string | undefined) => Error | undefined;
}

/** A JSON syntax error, a duplicate key, or nesting beyond MAX_JSON_DEPTH; the message says what and at which byte. */
export class JsonParseError extends Error {}

/** Longer keys are cut short in messages. */
const SHOWN_KEY_LENGTH = 100;

/**
 * Parses JSON from UTF-8 bytes without blocking the event loop: every JSON_SLICE_BYTES
 * it waits a turn. It walks with a stack of its own (no recursion), refuses nesting
 * beyond MAX_JSON_DEPTH as soon as it meets it, and a key its object already has;
 * reads integers beyond 2^53 exactly as bigints, and builds tensor data flat, never an
 * array per row. Strings decode as Buffer's UTF-8 does (a malformed sequence becomes
 * U+FFFD), like JSON.parse of the decoded text.
 */
export async function parseJson(bytes: Uint8Array, options: JsonParseOptions = {}): Promise<unknown> {
  const reader = new JsonReader(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), options);
  let nextPause = JSON_SLICE_BYTES;
  while (!reader.step()) {
    if (reader.position >= nextPause) {
      await nextTurn();
      nextPause = reader.position + JSON_SLICE_BYTES;
    }
  }
  return reader.result;
}

type Frame =
  | { readonly kind: 'object'; readonly value: Record<string, unknown>; key: string }
  | { readonly kind: 'array'; readonly value: unknown[] }
  /** One level of a tensor's arrays; `depth` counts them from the tensor's `data` (1). */
  | { readonly kind: 'tensor'; readonly values: FlatTensorValues; readonly depth: number };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** A control character, which JSON strings must escape. */
const CONTROL = /[\u0000-\u001f]/;
/** Powers of ten that a double holds exactly: m / 10^k and m * 10^k of a mantissa below 2^53 round correctly (Clinger's fast path). */
const EXACT_POWERS_OF_TEN = Array.from({ length: 23 }, (_, k) => 10 ** k);
/**
 * The most digits of an integer read as a bigint: 2^64-1 has 20, and no field takes a
 * longer one exactly. A longer one is a double, as JSON.parse reads it, since BigInt's
 * parse of a megabyte of digits takes seconds on the event loop.
 */
const MAX_BIGINT_DIGITS = 20;

class JsonReader {
  position = 0;
  result: unknown;
  private readonly stack: Frame[] = [];
  /** Objects and arrays open outside tensor data. */
  private depth = 0;
  /** Values read outside tensor data, for MAX_JSON_VALUES_OUTSIDE_TENSORS. */
  private valuesOutsideTensors = 0;
  /**
   * Whether a tensor's data is open: an object there (never a valid element) holds no
   * tensor data of its own, so its arrays count as other nesting and cannot restart the
   * tensor's depth.
   */
  private inTensor = false;
  /** Where the next backslash is, found once per backslash rather than once per string. */
  private nextBackslash = -1;

  private readonly isTensorData: (key: string) => boolean;

  constructor(
    private readonly bytes: Buffer,
    private readonly options: JsonParseOptions,
  ) {
    this.isTensorData = options.isTensorData ?? (() => false);
  }

  /** Reads one value (a scalar, or the opening of an object or array) and whatever closes after it; true at the end of the document. */
  step(): boolean {
    const top = this.stack[this.stack.length - 1];
    if (top?.kind === 'tensor' && top.depth >= MAX_JSON_DEPTH) this.tooDeep();
    switch (this.skipSpace()) {
      case 0x7b /* { */: {
        this.open();
        const object: Record<string, unknown> = {};
        if (this.skipSpace() === 0x7d /* } */) {
          this.position++;
          this.depth--;
          return this.deliver(object);
        }
        this.stack.push({ kind: 'object', value: object, key: this.readKey() });
        return false;
      }
      case 0x5b /* [ */: {
        let frame: Frame;
        if (top?.kind === 'tensor') {
          this.position++;
          frame = { kind: 'tensor', values: top.values, depth: top.depth + 1 };
        } else if (top?.kind === 'object' && !this.inTensor && this.isTensorData(top.key)) {
          this.position++;
          this.inTensor = true;
          frame = { kind: 'tensor', values: new FlatTensorValues(), depth: 1 };
        } else {
          this.open();
          frame = { kind: 'array', value: [] };
        }
        if (this.skipSpace() === 0x5d /* ] */) {
          this.position++;
          return this.close(frame);
        }
        this.stack.push(frame);
        return false;
      }
      default:
        return this.deliver(this.readScalar());
    }
  }

  private open(): void {
    if (this.depth >= MAX_JSON_DEPTH) this.tooDeep();
    this.position++;
    this.depth++;
  }

  /** A closed object or array: a nested tensor array's elements are already its tensor's. */
  private close(frame: Frame): boolean {
    if (frame.kind === 'tensor') {
      if (frame.depth > 1) return this.afterValue();
      this.inTensor = false;
      return this.deliver(frame.values);
    }
    this.depth--;
    return this.deliver(frame.value);
  }

  /** Puts a finished value in its container (or makes it the result), then reads what follows it. */
  private deliver(value: unknown): boolean {
    const top = this.stack[this.stack.length - 1];
    // An object inside tensor data is no element either (core refuses it), so it counts too.
    const counted = top?.kind !== 'tensor' || (typeof value === 'object' && value !== null);
    if (counted && ++this.valuesOutsideTensors > MAX_JSON_VALUES_OUTSIDE_TENSORS) {
      this.fail(`the JSON holds more than ${MAX_JSON_VALUES_OUTSIDE_TENSORS} values outside tensor data`);
    }
    if (top === undefined) {
      this.result = value;
      if (this.skipSpace() !== undefined) this.unexpected();
      return true;
    }
    if (top.kind === 'object') {
      // A member named __proto__ is a member like any other, as JSON.parse makes it.
      if (top.key === '__proto__') Object.defineProperty(top.value, top.key, { value, enumerable: true, writable: true, configurable: true });
      else top.value[top.key] = value;
    } else if (top.kind === 'array') {
      top.value.push(value);
    } else {
      top.values.add(value);
    }
    return this.afterValue();
  }

  /** After a container's member: a comma and the next one, or the container's end. */
  private afterValue(): boolean {
    const top = this.stack.at(-1);
    if (top === undefined) throw new Error('JsonParser.afterValue: no open object or array');
    const next = this.skipSpace();
    if (next === 0x2c /* , */) {
      this.position++;
      if (top.kind === 'object') {
        const at = this.position;
        top.key = this.readKey();
        // Refused, not resolved: parsers that keep the first value (Triton's) and those that keep the last would read two requests.
        if (Object.hasOwn(top.value, top.key)) this.duplicate(top.key, at);
      }
      return false;
    }
    if (next !== (top.kind === 'object' ? 0x7d : 0x5d)) this.unexpected();
    this.position++;
    this.stack.pop();
    return this.close(top);
  }

  private readKey(): string {
    if (this.skipSpace() !== QUOTE) this.unexpected();
    const key = this.readString();
    if (this.skipSpace() !== 0x3a /* : */) this.unexpected();
    this.position++;
    return key;
  }

  private readScalar(): unknown {
    const byte = this.bytes[this.position];
    if (byte === QUOTE) return this.readString();
    if (byte === 0x2d /* - */ || (byte !== undefined && byte >= 0x30 && byte <= 0x39)) return this.readNumber();
    if (this.literal('true')) return true;
    if (this.literal('false')) return false;
    if (this.literal('null')) return null;
    return this.unexpected();
  }

  private literal(word: string): boolean {
    if (this.bytes.toString('latin1', this.position, this.position + word.length) !== word) return false;
    this.position += word.length;
    return true;
  }

  private readString(): string {
    const start = this.position + 1;
    const end = this.bytes.indexOf(QUOTE, start);
    if (end === -1) this.fail('unterminated string');
    if (this.nextBackslash < start && this.nextBackslash !== -2) {
      this.nextBackslash = this.bytes.indexOf(BACKSLASH, start);
      if (this.nextBackslash === -1) this.nextBackslash = -2;
    }
    if (this.nextBackslash >= 0 && this.nextBackslash < end) return this.readEscapedString(start);
    this.position = end + 1;
    const text = this.bytes.toString('utf8', start, end);
    if (CONTROL.test(text)) this.fail('a control character in a string');
    return text;
  }

  /** A string with escapes: found to its end here, decoded by JSON.parse, which checks the escapes. */
  private readEscapedString(start: number): string {
    let at = start;
    for (;;) {
      const byte = this.bytes[at];
      if (byte === undefined) this.fail('unterminated string');
      if (byte === QUOTE) break;
      at += byte === BACKSLASH ? 2 : 1;
    }
    this.position = at + 1;
    try {
      return JSON.parse(this.bytes.toString('utf8', start - 1, at + 1)) as string;
    } catch {
      return this.fail('a malformed string');
    }
  }

  /** JSON's number grammar; an integer beyond 2^53 (of at most MAX_BIGINT_DIGITS digits) is a bigint, exactly as written. */
  private readNumber(): number | bigint {
    const { bytes } = this;
    const start = this.position;
    let at = start;
    const negative = bytes[at] === 0x2d;
    if (negative) at++;
    let mantissa = 0;
    let digits = 0;
    let fractionDigits = 0;
    if (bytes[at] === 0x30) {
      at++;
    } else {
      if (!isDigit(bytes[at])) this.fail('a malformed number', at);
      for (let digit = digitValue(bytes[at]); digit >= 0; digit = digitValue(bytes[++at]), digits++) mantissa = mantissa * 10 + digit;
    }
    const integer = bytes[at] !== 0x2e /* . */ && !isExponentMark(bytes[at]);
    if (bytes[at] === 0x2e) {
      at++;
      if (!isDigit(bytes[at])) this.fail('a malformed number', at);
      for (let digit = digitValue(bytes[at]); digit >= 0; digit = digitValue(bytes[++at]), digits++, fractionDigits++) mantissa = mantissa * 10 + digit;
    }
    let exponent = 0;
    if (isExponentMark(bytes[at])) {
      at++;
      const negativeExponent = bytes[at] === 0x2d;
      if (negativeExponent || bytes[at] === 0x2b) at++;
      if (!isDigit(bytes[at])) this.fail('a malformed number', at);
      for (let digit = digitValue(bytes[at]); digit >= 0; digit = digitValue(bytes[++at])) exponent = Math.min(exponent * 10 + digit, 1e6);
      if (negativeExponent) exponent = -exponent;
    }
    this.position = at;
    if (digits <= 15) {
      const scale = exponent - fractionDigits;
      const power = EXACT_POWERS_OF_TEN[Math.abs(scale)];
      if (power !== undefined) return scale >= 0 ? (negative ? -mantissa : mantissa) * power : (negative ? -mantissa : mantissa) / power;
    }
    const text = bytes.toString('latin1', start, at);
    const value = Number(text);
    return integer && digits <= MAX_BIGINT_DIGITS && !Number.isSafeInteger(value) ? BigInt(text) : value;
  }

  /** The next byte that is not JSON whitespace, where `position` now is; undefined at the end. */
  private skipSpace(): number | undefined {
    const { bytes } = this;
    let byte = bytes[this.position];
    while (byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09) byte = bytes[++this.position];
    return byte;
  }

  private tooDeep(): never {
    const bottom = this.stack[0];
    const error = this.options.tooDeep?.(bottom?.kind === 'object' ? bottom.key : undefined);
    if (error) throw error;
    return this.fail(`JSON nesting depth exceeds maximum allowed limit (${MAX_JSON_DEPTH})`);
  }

  /** `at`: where the key starts. The duplicate's object is on top of the stack. */
  private duplicate(key: string, at: number): never {
    const holder = this.stack[this.stack.length - 2];
    const error = this.options.duplicateKey?.(key, { depth: this.stack.length - 1, parentKey: holder?.kind === 'object' ? holder.key : undefined });
    if (error) throw error;
    const shown = key.length > SHOWN_KEY_LENGTH ? `${key.slice(0, SHOWN_KEY_LENGTH)}…` : key;
    return this.fail(`duplicate key '${shown}'`, at);
  }

  private unexpected(): never {
    const byte = this.bytes[this.position];
    if (byte === undefined) return this.fail('unexpected end of the JSON');
    return this.fail(`unexpected ${byte >= 0x21 && byte < 0x7f ? `'${String.fromCharCode(byte)}'` : `byte 0x${byte.toString(16).padStart(2, '0')}`}`);
  }

  private fail(what: string, at = this.position): never {
    throw new JsonParseError(`${what} at byte ${at}`);
  }
}

function isDigit(byte: number | undefined): boolean {
  return byte !== undefined && byte >= 0x30 && byte <= 0x39;
}

/** The digit's value, 0 to 9; -1 for any other byte and past the end. */
function digitValue(byte: number | undefined): number {
  return byte !== undefined && byte >= 0x30 && byte <= 0x39 ? byte - 0x30 : -1;
}

/** `e` or `E`; false past the end. */
function isExponentMark(byte: number | undefined): boolean {
  return byte === 0x65 || byte === 0x45;
}
