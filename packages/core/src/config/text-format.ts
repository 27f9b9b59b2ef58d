import { InferenceError } from '../errors.js';
import { formatPath, modelConfigDescriptor, type FieldDescriptor, type MessageDescriptor, type ValueDescriptor } from './descriptor.js';
import { INTEGER_RANGES, type ProtoIntegerType } from './proto-integers.js';
import type { ModelConfig } from './schema.js';
import { Tokenizer, lineColumn, type Punctuation, type Token } from './text-format-tokenizer.js';

/*
 * The protobuf text-format grammar, driven by the schema's descriptors: a field's
 * descriptor decides whether it is a list (always an array, even when written once), a
 * map (a plain object, later entries winning as in protobuf), an enum (its name), a
 * message or a scalar, and which literals it accepts. Errors are INVALID_ARG and name
 * the source, line:column and the field path (`input[0].dims`).
 */

/** Far deeper than ModelConfig nests (under 10 levels): a guard against hostile input. */
const MAX_DEPTH = 32;

/** Longer literals are out of every range; checked before BigInt parses them. */
const MAX_INTEGER_DIGITS = 24;
const TRUE_WORDS = new Set(['true', 'True', 't']);
const FALSE_WORDS = new Set(['false', 'False', 'f']);
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

type IntToken = Extract<Token, { kind: 'int' }>;

function defaultValue(value: ValueDescriptor): unknown {
  if (value.kind === 'message') return {};
  if (value.kind === 'enum') return value.values[0];
  return value.type === 'string' ? '' : value.type === 'bool' ? false : 0;
}

function describeToken(token: Token): string {
  if (token.kind === 'eof') return 'the end of the input';
  const text = token.text.length > 40 ? `${token.text.slice(0, 40)}…` : token.text;
  return token.kind === 'string' ? `the string ${text}` : `'${text}'`;
}

function integerMagnitude(token: IntToken): bigint | undefined {
  const digits = token.digits.replace(/^0+(?=.)/, '');
  if (digits.length > MAX_INTEGER_DIGITS) return undefined;
  return BigInt(token.radix === 10 ? digits : `${token.radix === 16 ? '0x' : '0o'}${digits}`);
}

class TextFormatParser {
  private readonly tokens: Tokenizer;

  constructor(
    private readonly text: string,
    private readonly source: string | undefined,
  ) {
    this.tokens = new Tokenizer(text, (offset, message) => this.fail(offset, message));
  }

  parseDocument(descriptor: MessageDescriptor): Record<string, unknown> {
    return this.parseFields(descriptor, [], 0, undefined);
  }

  private fail(offset: number, message: string): never {
    throw new InferenceError('INVALID_ARG', `${this.position(offset)}: ${message}`);
  }

  private position(offset: number): string {
    const { line, column } = lineColumn(this.text, offset);
    return this.source ? `${this.source}:${line}:${column}` : `line ${line}:${column}`;
  }

  private tryConsume(symbol: Punctuation): Token | undefined {
    const token = this.tokens.peek();
    return token.kind === 'symbol' && token.text === symbol ? this.tokens.next() : undefined;
  }

  /** The fields of one message, up to its closing brace (or the end of input at top level). */
  private parseFields(descriptor: MessageDescriptor, path: readonly PropertyKey[], depth: number, open: Token | undefined): Record<string, unknown> {
    const close = open === undefined ? undefined : open.text === '<' ? '>' : '}';
    const where = path.length ? ` in ${formatPath(path)}` : '';
    const message: Record<string, unknown> = {};
    const oneofMembers = new Map<readonly string[], string>();
    for (;;) {
      const token = this.tokens.next();
      if (token.kind === 'eof' && open) {
        this.fail(token.offset, `unexpected end of input: '${open.text}' at ${this.position(open.offset)} is never closed`);
      }
      if (token.kind === 'eof' || (token.kind === 'symbol' && token.text === close)) return message;
      if (token.kind !== 'ident') {
        this.fail(
          token.offset,
          token.text === '['
            ? `extension and Any fields ('[name]') are not supported${where}`
            : `expected a field name${close ? ` or '${close}'` : ''}${where}, got ${describeToken(token)}`,
        );
      }
      const fieldPath = [...path, token.text];
      const field = descriptor.fields.get(token.text);
      if (!field) this.fail(token.offset, `unknown field '${formatPath(fieldPath)}'`);
      if (field.oneof) {
        const other = oneofMembers.get(field.oneof);
        if (other !== undefined && other !== field.name) {
          this.fail(token.offset, `'${formatPath(fieldPath)}' cannot be set along with '${other}': they are alternatives (a oneof)`);
        }
        oneofMembers.set(field.oneof, field.name);
      }
      this.parseField(field, message, fieldPath, depth, token);
      const separator = this.tokens.peek();
      if (separator.kind === 'symbol' && (separator.text === ',' || separator.text === ';')) this.tokens.next();
    }
  }

  private parseField(field: FieldDescriptor, message: Record<string, unknown>, path: readonly PropertyKey[], depth: number, name: Token): void {
    const isMessage = field.value.kind === 'message' || field.map !== undefined;
    if (!this.tryConsume(':') && !isMessage) {
      this.fail(this.tokens.peek().offset, `expected ':' after '${formatPath(path)}', got ${describeToken(this.tokens.peek())}`);
    }
    const isList = field.repeated || field.map !== undefined;
    if (!isList && message[field.name] !== undefined) this.fail(name.offset, `'${formatPath(path)}' is set more than once`);
    const bracket = this.tryConsume('[');
    if (!bracket) return this.parseElement(field, message, path, depth);
    if (!isList) this.fail(bracket.offset, `'${formatPath(path)}' is not a repeated field, so it cannot take a list`);
    message[field.name] ??= field.map ? {} : [];
    if (this.tryConsume(']')) return;
    for (;;) {
      this.parseElement(field, message, path, depth);
      if (this.tryConsume(']')) return;
      if (!this.tryConsume(',')) this.fail(this.tokens.peek().offset, `expected ',' or ']' in the list '${formatPath(path)}', got ${describeToken(this.tokens.peek())}`);
    }
  }

  /** One value of a field: appended to a list, added to a map, or set. */
  private parseElement(field: FieldDescriptor, message: Record<string, unknown>, path: readonly PropertyKey[], depth: number): void {
    if (field.map) {
      const entries = (message[field.name] ??= {}) as Record<string, unknown>;
      const entryPath = [...path, Object.keys(entries).length];
      const entry = this.parseValue({ kind: 'message', message: field.map.entry }, entryPath, depth) as Record<string, unknown>;
      // defineProperty: a key such as "__proto__" must stay an ordinary entry.
      Object.defineProperty(entries, String(entry['key'] ?? defaultValue(field.map.key)), {
        value: entry['value'] ?? defaultValue(field.value),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else if (field.repeated) {
      const list = (message[field.name] ??= []) as unknown[];
      list.push(this.parseValue(field.value, [...path, list.length], depth));
    } else {
      message[field.name] = this.parseValue(field.value, path, depth);
    }
  }

  private parseValue(value: ValueDescriptor, path: readonly PropertyKey[], depth: number): unknown {
    if (value.kind === 'message') {
      const open = this.tokens.next();
      if (open.kind !== 'symbol' || (open.text !== '{' && open.text !== '<')) {
        this.fail(open.offset, `expected '{' to open '${formatPath(path)}', got ${describeToken(open)}`);
      }
      if (depth >= MAX_DEPTH) this.fail(open.offset, `'${formatPath(path)}' nests messages deeper than ${MAX_DEPTH} levels`);
      return this.parseFields(value.message, path, depth + 1, open);
    }
    if (value.kind === 'enum') return this.parseEnum(value.values, path);
    switch (value.type) {
      case 'string':
        return this.parseString(path);
      case 'bool':
        return this.parseBool(path);
      case 'float':
      case 'double':
        return this.parseFloat(path);
      default:
        return this.parseInteger(value.type, path);
    }
  }

  private parseEnum(values: readonly string[], path: readonly PropertyKey[]): string {
    const token = this.tokens.next();
    if (token.kind === 'ident' && values.includes(token.text)) return token.text;
    // An enum may also be written as its number; the schema lists values in number order.
    const number = token.kind === 'int' ? integerMagnitude(token) : undefined;
    if (number !== undefined && number < BigInt(values.length)) return values[Number(number)]!;
    return this.fail(token.offset, `${describeToken(token)} is not a value of '${formatPath(path)}'; expected one of ${values.join(', ')}`);
  }

  private parseString(path: readonly PropertyKey[]): string {
    const first = this.tokens.next();
    if (first.kind !== 'string') this.fail(first.offset, `expected a quoted string for '${formatPath(path)}', got ${describeToken(first)}`);
    // Adjacent literals concatenate, as in C.
    const parts = [first.bytes];
    for (let next = this.tokens.peek(); next.kind === 'string'; next = this.tokens.peek()) parts.push((this.tokens.next(), next.bytes));
    const bytes = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
    parts.reduce((at, part) => (bytes.set(part, at), at + part.length), 0);
    try {
      return utf8.decode(bytes);
    } catch {
      return this.fail(first.offset, `the string for '${formatPath(path)}' is not valid UTF-8`);
    }
  }

  private parseBool(path: readonly PropertyKey[]): boolean {
    const token = this.tokens.next();
    if (token.kind === 'ident' && TRUE_WORDS.has(token.text)) return true;
    if (token.kind === 'ident' && FALSE_WORDS.has(token.text)) return false;
    const number = token.kind === 'int' ? integerMagnitude(token) : undefined;
    if (number === 0n || number === 1n) return number === 1n;
    return this.fail(token.offset, `expected true or false for '${formatPath(path)}', got ${describeToken(token)}`);
  }

  private parseFloat(path: readonly PropertyKey[]): number {
    const negative = this.tryConsume('-') !== undefined;
    const token = this.tokens.next();
    let magnitude: number;
    if (token.kind === 'float') magnitude = token.value;
    else if (token.kind === 'int') magnitude = token.radix === 10 ? Number(token.digits) : parseInt(token.digits, token.radix);
    else if (token.kind === 'ident' && /^(inf|infinity)$/i.test(token.text)) magnitude = Infinity;
    else if (token.kind === 'ident' && /^nan$/i.test(token.text)) magnitude = NaN;
    else return this.fail(token.offset, `expected a number for '${formatPath(path)}', got ${describeToken(token)}`);
    return negative ? -magnitude : magnitude;
  }

  private parseInteger(type: ProtoIntegerType, path: readonly PropertyKey[]): number {
    const minus = this.tryConsume('-');
    const token = this.tokens.next();
    if (token.kind !== 'int') this.fail(token.offset, `expected an integer for '${formatPath(path)}', got ${describeToken(token)}`);
    const magnitude = integerMagnitude(token);
    const value = magnitude === undefined ? undefined : minus ? -magnitude : magnitude;
    const [min, max] = INTEGER_RANGES[type];
    if (value === undefined || value < min || value > max) {
      this.fail((minus ?? token).offset, `${minus ? '-' : ''}${token.text} is out of range for '${formatPath(path)}' (${type})`);
    }
    return Number(value);
  }
}

/** Parses protobuf text format against a message descriptor. */
export function parseTextFormat(text: string, descriptor: MessageDescriptor, source?: string): Record<string, unknown> {
  return new TextFormatParser(text, source).parseDocument(descriptor);
}

/**
 * Parses a config.pbtxt into a ModelConfig (syntax and schema; no defaults are filled).
 * `source`, e.g. the file path, prefixes error positions.
 */
export function parseModelConfig(text: string, source?: string): ModelConfig {
  return parseTextFormat(text, modelConfigDescriptor, source) as ModelConfig;
}
