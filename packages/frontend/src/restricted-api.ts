import { createHash, timingSafeEqual } from 'node:crypto';
import { invalid } from './wire-values.js';

/** Triton's restricted API categories (its restricted_features.h), each a group of endpoints or rpcs. */
export const RESTRICTED_CATEGORIES = ['health', 'metadata', 'inference', 'shared-memory', 'model-config', 'model-repository', 'statistics', 'trace', 'logging'] as const;

export type RestrictedCategory = (typeof RESTRICTED_CATEGORIES)[number];

/** The header a restricted category's calls must carry, and the value it must have. */
export interface Restriction {
  readonly key: string;
  readonly value: string;
}

/**
 * The categories restricted, each with its header; a category left out is open to every
 * client. Over gRPC the header a client sends is `triton-grpc-protocol-<key>`, as in Triton.
 */
export type RestrictedApis = Readonly<Partial<Record<RestrictedCategory, Restriction>>>;

/**
 * Triton's `--http-restricted-api` / `--grpc-restricted-protocol` values, each
 * `<category>,<category>...:<key>=<value>`: split at the first ':' and the first '=' after
 * it, none of the three parts empty, each category known and named once across all of
 * them. `flag` names the flag in the INVALID_ARG thrown, as Triton's parser does.
 */
export function parseRestrictedApis(flag: string, specs: readonly string[]): RestrictedApis {
  // Triton calls them APIs over HTTP and protocols over gRPC.
  const noun = flag.startsWith('grpc') ? 'protocol' : 'api';
  const restricted: Partial<Record<RestrictedCategory, Restriction>> = {};
  for (const spec of specs) {
    const colon = spec.indexOf(':');
    const equals = spec.indexOf('=', colon + 1);
    const [names, key, value] = [spec.slice(0, colon), spec.slice(colon + 1, equals), spec.slice(equals + 1)];
    if (colon < 0 || equals < 0 || !names || !key || !value) throw invalid(`--${flag} takes <${noun}>,<${noun}>...:<key>=<value>, got '${spec}'`);
    for (const name of names.split(',')) {
      if (!isCategory(name)) throw invalid(`--${flag}: unknown restricted ${noun} '${name}' (known: ${RESTRICTED_CATEGORIES.join(', ')})`);
      if (restricted[name]) throw invalid(`--${flag}: restricted ${noun} '${name}' can not be specified in multiple config groups`);
      restricted[name] = { key, value };
    }
  }
  return restricted;
}

function isCategory(name: string): name is RestrictedCategory {
  return (RESTRICTED_CATEGORIES as readonly string[]).includes(name);
}

interface Requirement {
  /** The header as configured, for the refusal's message. */
  readonly header: string;
  /** Its name as received (Node and @grpc/grpc-js lower-case header names). */
  readonly lookup: string;
  readonly digest: Buffer;
}

/** A frontend's restrictions, checked on each call before anything else is done for it. */
export class ApiRestrictions {
  private readonly required = new Map<RestrictedCategory, Requirement>();

  /**
   * `frontend` names the frontend in the INVALID_ARG a malformed option throws;
   * `headerPrefix` goes before each key (gRPC's `triton-grpc-protocol-`).
   */
  constructor(frontend: string, restricted: RestrictedApis = {}, headerPrefix = '') {
    for (const [category, restriction] of Object.entries(restricted)) {
      if (!restriction) continue;
      const { key, value } = restriction;
      if (!isCategory(category)) throw invalid(`${frontend} option \`restrictedApis\`: unknown category '${category}' (known: ${RESTRICTED_CATEGORIES.join(', ')})`);
      if (typeof key !== 'string' || !key || typeof value !== 'string' || !value) {
        throw invalid(`${frontend} option \`restrictedApis\`: '${category}' needs a non-empty key and value`);
      }
      const header = headerPrefix + key;
      this.required.set(category, { header, lookup: header.toLowerCase(), digest: digest(value) });
    }
  }

  isRestricted(category: RestrictedCategory): boolean {
    return this.required.has(category);
  }

  /**
   * The header a call of `category` lacks (absent, or with another value), or undefined
   * when it may go on. `valueOf` reads one of the call's headers by its lower-case name.
   */
  missingHeader(category: RestrictedCategory, valueOf: (name: string) => string | undefined): string | undefined {
    const requirement = this.required.get(category);
    if (!requirement) return undefined;
    const value = valueOf(requirement.lookup);
    // Digests compare in constant time whatever the lengths, so the time taken tells nothing of the value.
    return value !== undefined && timingSafeEqual(digest(value), requirement.digest) ? undefined : requirement.header;
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
