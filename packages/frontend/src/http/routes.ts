import { InferenceError } from '@tritium/core';
import { modelVersion } from '../model-version.js';
import type { RestrictedCategory } from '../restricted-api.js';
import { HttpError } from './http-errors.js';

export type ModelAction = 'metadata' | 'ready' | 'config' | 'stats' | 'infer' | 'generate' | 'generate_stream';
export type SharedMemoryAction = 'status' | 'register' | 'unregister';

/** What a request asks for, read off its path. */
export type Route =
  | { readonly kind: 'server-metadata' }
  | { readonly kind: 'health'; readonly probe: 'live' | 'ready' }
  | { readonly kind: 'statistics' }
  | { readonly kind: 'logging' }
  /** v2/trace/setting, or v2/models/<model>/trace/setting. */
  | { readonly kind: 'trace'; readonly model: string | undefined }
  | { readonly kind: 'model'; readonly action: ModelAction; readonly model: string; readonly version: number | undefined }
  | { readonly kind: 'repository-index' }
  | { readonly kind: 'repository-control'; readonly action: 'load' | 'unload'; readonly model: string; readonly repository: string | undefined }
  | { readonly kind: 'shared-memory'; readonly memory: 'system' | 'cuda'; readonly action: SharedMemoryAction; readonly region: string | undefined };

const MODEL_ACTIONS = new Set<string>(['ready', 'config', 'stats', 'infer', 'generate', 'generate_stream']);
const SHARED_MEMORY_ACTIONS = new Set<string>(['status', 'register', 'unregister']);
const POSTED = new Set<string>(['infer', 'generate', 'generate_stream', 'register', 'unregister']);

/**
 * The route of Triton's HTTP/REST API that a request's path names (KServe v2 and Triton's
 * extensions), splitting the path once and switching on its parts. An unknown path is
 * NOT_FOUND (404), as in Triton; the method is checked apart (checkMethod), after the
 * route's restriction, as Triton's handlers do.
 */
export function routeOf(method: string | undefined, url: string | undefined): Route {
  const path = pathOf(url);
  const route = parse(path.split('/'));
  if (!route) throw new InferenceError('NOT_FOUND', `Not Found: no route for ${method} ${path}`);
  return route;
}

/** A route asked for with another method than its own is 405, as in Triton. */
export function checkMethod(route: Route, method: string | undefined, url: string | undefined): void {
  // /v2/logging and the trace settings read with GET and change with POST.
  const settings = route.kind === 'logging' || route.kind === 'trace';
  if (settings && (method === 'GET' || method === 'POST')) return;
  const expected = settings ? 'GET, POST' : methodOf(route);
  if (method !== expected) throw new HttpError(405, `Method Not Allowed: ${pathOf(url)} takes ${expected}, got ${method}`, { allow: expected });
}

/** The restricted-API category of a route, as Triton's handlers check them. */
export function categoryOf(route: Route): RestrictedCategory {
  switch (route.kind) {
    case 'server-metadata':
      return 'metadata';
    case 'health':
      return 'health';
    case 'statistics':
      return 'statistics';
    case 'logging':
      return 'logging';
    case 'trace':
      return 'trace';
    case 'repository-index':
    case 'repository-control':
      return 'model-repository';
    case 'shared-memory':
      return 'shared-memory';
    case 'model':
      return MODEL_ACTION_CATEGORIES[route.action];
  }
}

const MODEL_ACTION_CATEGORIES: Readonly<Record<ModelAction, RestrictedCategory>> = {
  metadata: 'metadata',
  ready: 'health',
  config: 'model-config',
  stats: 'statistics',
  infer: 'inference',
  generate: 'inference',
  generate_stream: 'inference',
};

function pathOf(url: string | undefined): string {
  const path = url ?? '/';
  const query = path.indexOf('?');
  return query < 0 ? path : path.slice(0, query);
}

function methodOf(route: Route): 'GET' | 'POST' {
  if (route.kind === 'repository-index' || route.kind === 'repository-control') return 'POST';
  return 'action' in route && POSTED.has(route.action) ? 'POST' : 'GET';
}

/** `parts` is the path split on '/': ['', 'v2', ...]. */
function parse(parts: string[]): Route | undefined {
  if (parts[0] !== '' || parts[1] !== 'v2') return undefined;
  const section = parts[2];
  const rest = parts.length - 3;
  switch (section) {
    case undefined:
      return { kind: 'server-metadata' };
    case 'health':
      return rest === 1 && (parts[3] === 'live' || parts[3] === 'ready') ? { kind: 'health', probe: parts[3] } : undefined;
    case 'models':
      return parts[3] === 'stats' && rest === 1 ? { kind: 'statistics' } : modelRoute(parts);
    case 'logging':
      return rest === 0 ? { kind: 'logging' } : undefined;
    case 'trace':
      return rest === 1 && parts[3] === 'setting' ? { kind: 'trace', model: undefined } : undefined;
    case 'repository':
      return repositoryRoute(parts.slice(3));
    case 'systemsharedmemory':
    case 'cudasharedmemory':
      return sharedMemoryRoute(section === 'systemsharedmemory' ? 'system' : 'cuda', parts.slice(3));
    default:
      return undefined;
  }
}

/** /v2/models/{m}[/versions/{v}][/{action}] */
function modelRoute(parts: string[]): Route | undefined {
  const model = segment(parts[3]);
  if (!model) return undefined;
  let next = 4;
  let version: number | undefined;
  if (parts[next] === 'versions') {
    version = versionOf(parts[next + 1]);
    next += 2;
  }
  const action = parts[next];
  if (action === 'trace' && parts[next + 1] === 'setting' && parts.length === next + 2) {
    // As Triton: trace settings are per model, with no versions.
    if (version !== undefined) throw new InferenceError('INVALID_ARG', `trace settings are per model: '/versions/${version}' has no trace setting`);
    return { kind: 'trace', model };
  }
  if (parts.length > next + 1 || (action !== undefined && !MODEL_ACTIONS.has(action))) return undefined;
  return { kind: 'model', action: (action ?? 'metadata') as ModelAction, model, version };
}

/** /v2/repository[/{repository}]/index and /v2/repository[/{repository}]/models/{m}/(load|unload) */
function repositoryRoute(parts: string[]): Route | undefined {
  const repository = parts[0] !== 'index' && parts[0] !== 'models' ? segment(parts[0]) : undefined;
  const [kind, model, action, ...extra] = repository === undefined ? parts : parts.slice(1);
  if (kind === 'index' && model === undefined) return { kind: 'repository-index' };
  const name = segment(model);
  if (kind !== 'models' || !name || (action !== 'load' && action !== 'unload') || extra.length) return undefined;
  return { kind: 'repository-control', action, model: name, repository };
}

/** /v2/(system|cuda)sharedmemory[/region/{r}]/(status|register|unregister) */
function sharedMemoryRoute(memory: 'system' | 'cuda', parts: string[]): Route | undefined {
  const region = parts[0] === 'region' ? segment(parts[1]) : undefined;
  const rest = parts[0] === 'region' ? parts.slice(2) : parts;
  const [action] = rest;
  if ((parts[0] === 'region' && !region) || rest.length !== 1 || action === undefined || !SHARED_MEMORY_ACTIONS.has(action)) return undefined;
  return { kind: 'shared-memory', memory, action: action as SharedMemoryAction, region };
}

/** A path segment as a name: percent-decoded (clients quote model names), empty as undefined. */
function segment(part: string | undefined): string | undefined {
  if (!part) return undefined;
  if (!part.includes('%')) return part;
  try {
    return decodeURIComponent(part);
  } catch {
    throw new InferenceError('INVALID_ARG', `path segment '${part}' is not valid percent-encoding`);
  }
}

/** A path's version: digits, or no route at all (as Triton's route pattern takes digits only); read as both protocols read versions. */
function versionOf(part: string | undefined): number {
  if (part === undefined || !/^\d+$/.test(part)) {
    throw new InferenceError('NOT_FOUND', `Not Found: model version '${part ?? ''}' in the path must be a non-negative integer`);
  }
  return modelVersion(part)!;
}
