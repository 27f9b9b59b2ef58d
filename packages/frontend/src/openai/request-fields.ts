import { invalidField, OpenAIError } from './openai-error.js';

/**
 * An OpenAI request body's fields, read one by one with their type and range checked;
 * a wrong one is refused naming it (`param`). Fields the caller never asks for are
 * refused by `refuseOthers`, as Triton's frontend refuses unknown fields.
 */
export class RequestFields {
  private readonly read = new Set<string>();

  private constructor(private readonly body: Readonly<Record<string, unknown>>) {}

  /** The body's JSON object; anything else is a 400. */
  static parse(text: string): RequestFields {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new OpenAIError(400, `the request body is not valid JSON: ${(error as Error).message}`, { code: 'invalid_json' });
    }
    if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new OpenAIError(400, 'the request body must be a JSON object', { code: 'invalid_json' });
    return new RequestFields(json as Record<string, unknown>);
  }

  /** The field's value as sent; undefined when absent or null (OpenAI's clients send null for "not given"). */
  raw(name: string): unknown {
    this.read.add(name);
    return this.body[name] ?? undefined;
  }

  requiredString(name: string): string {
    const value = this.raw(name);
    if (typeof value !== 'string' || value.length === 0) throw invalidField(name, `'${name}' is required and must be a non-empty string`);
    return value;
  }

  string(name: string): string | undefined {
    const value = this.raw(name);
    if (value !== undefined && typeof value !== 'string') throw invalidField(name, `'${name}' must be a string, got ${describe(value)}`);
    return value;
  }

  boolean(name: string): boolean | undefined {
    const value = this.raw(name);
    if (value !== undefined && typeof value !== 'boolean') throw invalidField(name, `'${name}' must be a boolean, got ${describe(value)}`);
    return value;
  }

  number(name: string, min: number, max: number): number | undefined {
    const value = this.raw(name);
    if (value === undefined) return undefined;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) throw invalidField(name, `'${name}' must be a number from ${min} to ${max}, got ${describe(value)}`);
    return value;
  }

  integer(name: string, min: number, max: number): number | undefined {
    const value = this.number(name, min, max);
    if (value !== undefined && !Number.isInteger(value)) throw invalidField(name, `'${name}' must be an integer, got ${value}`);
    return value;
  }

  /** A string or a list of them (OpenAI's `stop`), as a list; at most `max`. */
  strings(name: string, max: number): string[] | undefined {
    const value = this.raw(name);
    if (value === undefined) return undefined;
    const list = typeof value === 'string' ? [value] : value;
    if (!Array.isArray(list) || list.some((item) => typeof item !== 'string') || list.length > max) {
      throw invalidField(name, `'${name}' must be a string or a list of at most ${max} strings, got ${describe(value)}`);
    }
    return list as string[];
  }

  /** Refuses every field of the body not read so far, naming the first. */
  refuseOthers(): void {
    const unrecognized = Object.keys(this.body).find((name) => !this.read.has(name));
    if (unrecognized !== undefined) throw new OpenAIError(400, `unrecognized request field '${unrecognized}'`, { param: unrecognized, code: 'unknown_parameter' });
  }
}

export function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (value === null) return 'null';
  return typeof value === 'object' ? 'an object' : JSON.stringify(value);
}
