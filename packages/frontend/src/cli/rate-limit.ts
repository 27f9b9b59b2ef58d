import type { RateLimitOptions, RateLimitResource } from '@tritium/core';
import { UsageError } from './usage-error.js';

const RESOURCE_FORM = "'<resource_name>:<count>:<device>' or '<resource_name>:<count>'";

/**
 * --rate-limit and every --rate-limit-resource, as tritonserver reads them: the mode in
 * any case (`off` by default), resources as `<name>:<count>[:<device>]`. Undefined when
 * neither is given.
 */
export function rateLimitOptions(mode: string | undefined, resources: readonly string[]): RateLimitOptions | undefined {
  if (mode === undefined && resources.length === 0) return undefined;
  const lower = (mode ?? 'off').toLowerCase();
  // Triton's own words for a bad mode.
  if (lower !== 'off' && lower !== 'execution_count') throw new UsageError(`invalid argument for --rate-limit: '${mode}' (execution_count or off)`);
  return { mode: lower, resources: resources.map(resource) };
}

function resource(spec: string): RateLimitResource {
  const parts = spec.split(':');
  if (parts.length < 2 || parts.length > 3 || parts[0] === '') throw new UsageError(`--rate-limit-resource option format is ${RESOURCE_FORM}. Got ${spec}`);
  const [name, count, device] = parts as [string, string, string | undefined];
  return { name, count: integer(spec, count), ...(device === undefined ? {} : { device: integer(spec, device) }) };
}

function integer(spec: string, value: string): number {
  const number = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(number)) throw new UsageError(`--rate-limit-resource ${spec}: '${value}' is not a non-negative integer`);
  return number;
}
