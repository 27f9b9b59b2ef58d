/*
 * The lexical layer of protobuf text format: whitespace and `#` comments, identifiers,
 * numbers (decimal, octal, hex, floats with exponent or `f` suffix), quoted strings with
 * C escapes, and punctuation. Every token keeps its offset so errors can point at it.
 */

export type Punctuation = '{' | '}' | '<' | '>' | '[' | ']' | ':' | ',' | ';' | '-';

export type Token =
  | { readonly kind: 'ident'; readonly text: string; readonly offset: number }
  /** An unsigned integer literal: `digits` in `radix` (the sign is a separate '-' token). */
  | { readonly kind: 'int'; readonly text: string; readonly digits: string; readonly radix: 8 | 10 | 16; readonly offset: number }
  | { readonly kind: 'float'; readonly text: string; readonly value: number; readonly offset: number }
  /** Strings are bytes in protobuf (escapes may produce any byte); adjacent ones are joined by the parser. */
  | { readonly kind: 'string'; readonly text: string; readonly bytes: Uint8Array; readonly offset: number }
  | { readonly kind: 'symbol'; readonly text: Punctuation; readonly offset: number }
  | { readonly kind: 'eof'; readonly text: ''; readonly offset: number };

/** Reports a syntax error at a source offset; never returns. */
export type Fail = (offset: number, message: string) => never;

const SYMBOLS = new Set<string>(['{', '}', '<', '>', '[', ']', ':', ',', ';', '-']);
const SIMPLE_ESCAPES: Record<string, number> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11, '\\': 92, "'": 39, '"': 34, '?': 63 };
const IDENT_START = /[A-Za-z_]/;
const IDENT_PART = /[A-Za-z0-9_]/;
const DIGIT = /[0-9]/;
const HEX_DIGIT = /[0-9A-Fa-f]/;
const OCTAL_DIGIT = /[0-7]/;
const WHITESPACE = /[ \t\r\n\f\v]/;
const utf8 = new TextEncoder();

export class Tokenizer {
  // A byte-order mark at the start is not content.
  private pos: number;
  private lookahead: Token | undefined;

  constructor(
    private readonly text: string,
    private readonly fail: Fail,
  ) {
    this.pos = text.startsWith('\uFEFF') ? 1 : 0;
  }

  peek(): Token {
    this.lookahead ??= this.read();
    return this.lookahead;
  }

  next(): Token {
    const token = this.peek();
    this.lookahead = undefined;
    return token;
  }

  private read(): Token {
    this.skipSpaceAndComments();
    const { text } = this;
    const start = this.pos;
    const c = text[start];
    if (c === undefined) return { kind: 'eof', text: '', offset: start };
    if (IDENT_START.test(c)) {
      while (this.pos < text.length && IDENT_PART.test(text[this.pos]!)) this.pos++;
      return { kind: 'ident', text: text.slice(start, this.pos), offset: start };
    }
    if (DIGIT.test(c) || (c === '.' && DIGIT.test(text[start + 1] ?? ''))) return this.readNumber(start);
    if (c === '"' || c === "'") return this.readString(start, c);
    if (SYMBOLS.has(c)) {
      this.pos++;
      return { kind: 'symbol', text: c as Punctuation, offset: start };
    }
    const code = c.codePointAt(0)!;
    return this.fail(start, `unexpected character ${JSON.stringify(String.fromCodePoint(code))} (U+${code.toString(16).toUpperCase().padStart(4, '0')})`);
  }

  private skipSpaceAndComments(): void {
    const { text } = this;
    while (this.pos < text.length) {
      const c = text[this.pos]!;
      if (WHITESPACE.test(c)) this.pos++;
      else if (c === '#') {
        const end = text.indexOf('\n', this.pos);
        this.pos = end < 0 ? text.length : end + 1;
      } else break;
    }
  }

  private readNumber(start: number): Token {
    const { text } = this;
    const take = (pattern: RegExp) => {
      const from = this.pos;
      while (this.pos < text.length && pattern.test(text[this.pos]!)) this.pos++;
      return text.slice(from, this.pos);
    };
    let token: Token;
    if (text[start] === '0' && (text[start + 1] === 'x' || text[start + 1] === 'X')) {
      this.pos = start + 2;
      const digits = take(HEX_DIGIT);
      if (!digits) this.fail(start, `'${text.slice(start, this.pos)}' is not a number: hex digits expected`);
      token = { kind: 'int', text: text.slice(start, this.pos), digits, radix: 16, offset: start };
    } else {
      take(DIGIT);
      let isFloat = false;
      if (text[this.pos] === '.') {
        this.pos++;
        take(DIGIT);
        isFloat = true;
      }
      if (text[this.pos] === 'e' || text[this.pos] === 'E') {
        this.pos++;
        if (text[this.pos] === '+' || text[this.pos] === '-') this.pos++;
        if (!take(DIGIT)) this.fail(start, `'${text.slice(start, this.pos)}' is not a number: exponent digits expected`);
        isFloat = true;
      }
      const body = text.slice(start, this.pos);
      if (text[this.pos] === 'f' || text[this.pos] === 'F') {
        this.pos++;
        isFloat = true;
      }
      const numberText = text.slice(start, this.pos);
      if (isFloat) token = { kind: 'float', text: numberText, value: Number(body), offset: start };
      else if (body.length > 1 && body[0] === '0') {
        // A leading zero makes an octal literal, as in C.
        if (![...body].every((d) => OCTAL_DIGIT.test(d))) this.fail(start, `'${body}' is not a valid octal number`);
        token = { kind: 'int', text: body, digits: body.slice(1), radix: 8, offset: start };
      } else token = { kind: 'int', text: body, digits: body, radix: 10, offset: start };
    }
    if (this.pos < text.length && IDENT_PART.test(text[this.pos]!)) {
      this.fail(start, `'${text.slice(start, this.pos + 1)}' is not a number: a space must separate a number from what follows`);
    }
    return token;
  }

  private readString(start: number, quote: string): Token {
    const { text } = this;
    const chunks: Uint8Array[] = [];
    let runStart = start + 1;
    this.pos = start + 1;
    for (;;) {
      const c = text[this.pos];
      if (c === undefined || c === '\n') this.fail(start, 'unterminated string: it must close on the line it starts');
      if (c !== quote && c !== '\\') {
        this.pos++;
        continue;
      }
      chunks.push(utf8.encode(text.slice(runStart, this.pos)));
      if (c === quote) break;
      chunks.push(Uint8Array.from(this.readEscape()));
      runStart = this.pos;
    }
    this.pos++;
    const bytes = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
    chunks.reduce((at, chunk) => (bytes.set(chunk, at), at + chunk.length), 0);
    return { kind: 'string', text: text.slice(start, this.pos), bytes, offset: start };
  }

  /** Reads one escape sequence at `pos` (on the backslash) and returns its bytes. */
  private readEscape(): number[] {
    const { text } = this;
    const start = this.pos;
    const c = text[start + 1] ?? '';
    this.pos = start + 2;
    const simple = SIMPLE_ESCAPES[c];
    if (simple !== undefined) return [simple];
    const digits = (pattern: RegExp, max: number) => {
      const from = this.pos;
      while (this.pos - from < max && pattern.test(text[this.pos] ?? '')) this.pos++;
      return text.slice(from, this.pos);
    };
    if (OCTAL_DIGIT.test(c)) {
      this.pos = start + 1;
      const value = parseInt(digits(OCTAL_DIGIT, 3), 8);
      if (value > 255) this.fail(start, `octal escape '${text.slice(start, this.pos)}' is above \\377`);
      return [value];
    }
    if (c === 'x' || c === 'X') {
      const hex = digits(HEX_DIGIT, 2);
      if (!hex) this.fail(start, `escape '\\${c}' needs hex digits`);
      return [parseInt(hex, 16)];
    }
    if (c === 'u' || c === 'U') return [...utf8.encode(String.fromCodePoint(this.readCodePoint(start, c === 'u' ? 4 : 8)))];
    return this.fail(start, `invalid escape sequence '\\${c}'`);
  }

  /** A \u or \U escape; a \u high surrogate must be followed by a \u low surrogate. */
  private readCodePoint(start: number, width: number): number {
    const { text } = this;
    const hex = text.slice(this.pos, this.pos + width);
    if (hex.length !== width || ![...hex].every((d) => HEX_DIGIT.test(d))) {
      this.fail(start, `escape '${text.slice(start, start + 2)}' needs exactly ${width} hex digits`);
    }
    this.pos += width;
    const code = parseInt(hex, 16);
    if (code > 0x10ffff) this.fail(start, `escape '${text.slice(start, this.pos)}' is beyond U+10FFFF`);
    if (code >= 0xdc00 && code <= 0xdfff) this.fail(start, `escape '${text.slice(start, this.pos)}' is a lone low surrogate`);
    if (code < 0xd800 || code > 0xdbff) return code;
    const low = /^\\u([Dd][C-Fc-f][0-9A-Fa-f]{2})/.exec(text.slice(this.pos, this.pos + 6));
    if (!low) this.fail(start, `escape '${text.slice(start, this.pos)}' is a high surrogate without a \\u low surrogate after it`);
    this.pos += 6;
    return 0x10000 + ((code - 0xd800) << 10) + (parseInt(low[1]!, 16) - 0xdc00);
  }
}

/** 1-based line and column of an offset. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: offset - lineStart + 1 };
}
