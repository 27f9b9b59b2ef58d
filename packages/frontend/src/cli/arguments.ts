import { parseArgs } from 'node:util';
import type { LogSettings, MetricsOptions, ModelControlMode, ResponseCacheOptions, ServerOptions } from '@tritium/core';
import type { ListenOptions } from '../listen.js';
import { DEFAULT_METRICS_PORT } from '../metrics/metrics-frontend.js';
import type { SharedMemoryOptions } from '../shared-memory/client-shared-memory.js';
import { parseRestrictedApis, type RestrictedApis } from '../restricted-api.js';
import { backendSettings, type BackendSettings } from './backend-config.js';
import { ALIASES, FIXED, FLAGS, IGNORED, UNSUPPORTED } from './flags.js';
import { traceConfig } from './trace-config.js';
import { rateLimitOptions } from './rate-limit.js';
import { UsageError } from './usage-error.js';

// What parseCommandLine throws, for its callers.
export { UsageError };

/** Triton's defaults. */
export const DEFAULTS = {
  address: '0.0.0.0',
  httpPort: 8000,
  grpcPort: 8001,
  metricsPort: DEFAULT_METRICS_PORT,
  exitTimeoutSecs: 30,
} as const;

export interface ServeOptions {
  /** For InferenceServer.start(), less what the command adds (the backend settings, logger). */
  readonly server: Omit<ServerOptions, 'backends' | 'backendSettings' | 'logger'> & { readonly exitTimeoutMs: number };
  /** Each service, or undefined when its --allow-* flag is false. */
  readonly http?: ListenOptions & SharedMemoryOptions & { readonly bodyLimitBytes?: number; readonly restrictedApis?: RestrictedApis };
  readonly grpc?: ListenOptions & SharedMemoryOptions & { readonly restrictedApis?: RestrictedApis; readonly maxReceiveMessageBytes?: number };
  readonly metrics?: ListenOptions;
  /** The OpenAI frontend, when --openai-port is given (its repository is the server's). */
  readonly openai?: ListenOptions & { readonly bodyLimitBytes?: number; readonly chatTemplateFile?: string; readonly defaultMaxTokens?: number };
  /** What --backend-config gives the official backends (the server's backendSettings). */
  readonly backends: BackendSettings;
  /** The --log-* flags, as the server's log starts (its ServerLogger). */
  readonly log: LogSettings;
  /** The ignored flags (and --backend-config settings) given, each with why ignoring it is harmless (the command warns of them). */
  readonly ignored: ReadonlyArray<{ readonly flag: string; readonly why: string }>;
}

export type Command = { readonly kind: 'help' } | { readonly kind: 'version' } | { readonly kind: 'serve'; readonly options: ServeOptions };

/**
 * Reads `tritium serve [flags]`, or tritonserver's form without `serve`. Flags take
 * `--flag=value` or `--flag value`, as tritonserver's. Throws UsageError.
 */
export function parseCommandLine(argv: readonly string[]): Command {
  const args = argv[0] === 'serve' ? argv.slice(1) : argv;
  if (args[0] !== undefined && !args[0].startsWith('-')) {
    throw new UsageError(`unknown command '${args[0]}': the command is 'serve' (tritium serve --model-repository <path>), or 'perf' (tritium perf -m <model>)`);
  }
  const given = readFlags(args);
  if (given.has('help')) return { kind: 'help' };
  if (given.has('version')) return { kind: 'version' };
  return { kind: 'serve', options: serveOptions(given) };
}

/** The values given to each flag, in order, by its own name (aliases resolved). */
class GivenFlags {
  private readonly values = new Map<string, string[]>();

  add(name: string, value: string): void {
    this.values.set(name, [...this.all(name), value]);
  }

  has(name: string): boolean {
    return this.values.has(name);
  }

  all(name: string): string[] {
    return this.values.get(name) ?? [];
  }

  /** The last value given, as Triton keeps for a flag given twice. */
  last(name: string): string | undefined {
    return this.values.get(name)?.at(-1);
  }

  names(): string[] {
    return [...this.values.keys()];
  }

  boolean(name: string): boolean | undefined {
    const value = this.last(name);
    return value === undefined ? undefined : parseBoolean(name, value);
  }

  integer(name: string, min: number, max: number): number | undefined {
    const value = this.last(name);
    return value === undefined ? undefined : parseInteger(name, value, min, max);
  }

  choice<T extends string>(name: string, choices: readonly T[]): T | undefined {
    const value = this.last(name);
    if (value === undefined) return undefined;
    const chosen = choices.find((choice) => choice === value.toLowerCase());
    if (!chosen) throw new UsageError(`--${name} must be one of ${choices.join(', ')}, got '${value}'`);
    return chosen;
  }
}

/** parseArgs' declarations: whether each flag tritium accepts takes a value (refused flags are found by name). */
const PARSE_OPTIONS = Object.fromEntries(
  [...Object.keys(FLAGS), ...Object.keys(ALIASES), ...Object.keys(FIXED), ...Object.keys(IGNORED)].map((name) => [
    name,
    { type: FLAGS[name] && FLAGS[name].value === undefined ? ('boolean' as const) : ('string' as const) },
  ]),
);

function readFlags(args: readonly string[]): GivenFlags {
  const { tokens } = parseArgs({ args: [...args], options: PARSE_OPTIONS, strict: false, allowPositionals: true, tokens: true });
  const given = new GivenFlags();
  for (const token of tokens) {
    if (token.kind === 'positional') throw new UsageError(`unexpected argument '${token.value}': every value follows its flag (--flag=value or --flag value)`);
    if (token.kind === 'option-terminator') throw new UsageError("unexpected '--': the command takes no arguments after its flags");
    const name = ALIASES[token.name] ?? token.name;
    const flag = FLAGS[name];
    if (!flag && !FIXED[name] && !IGNORED[name]) {
      const why = UNSUPPORTED[name];
      throw new UsageError(why ? `${token.rawName} is not supported by tritium: ${why}` : `unknown option '${token.rawName}' (tritium --help lists the options)`);
    }
    const placeholder = flag ? flag.value : '<value>';
    if (placeholder === undefined) {
      if (token.value !== undefined) throw new UsageError(`${token.rawName} takes no value, got '${token.value}'`);
      given.add(name, '');
      continue;
    }
    // `--http-port --grpc-port 1` would otherwise take '--grpc-port' as the port.
    if (!token.value || (!token.inlineValue && token.value.startsWith('--'))) throw new UsageError(`${token.rawName} needs a value ${placeholder}`);
    given.add(name, token.value);
  }
  return given;
}

function serveOptions(given: GivenFlags): ServeOptions {
  checkFixed(given);
  const exitTimeoutSecs = given.integer('exit-timeout-secs', 0, MAX_TIMER_SECS) ?? DEFAULTS.exitTimeoutSecs;
  const allowMetrics = given.boolean('allow-metrics') ?? true;
  const metrics = metricsOptions(given.all('metrics-config'));
  const httpAddress = given.last('http-address') ?? DEFAULTS.address;
  const service = (allow: string, address: string | undefined, port: string, defaultPort: number): ListenOptions | undefined =>
    (given.boolean(allow) ?? true) ? { host: address ?? DEFAULTS.address, port: given.integer(port, 0, 65_535) ?? defaultPort } : undefined;
  const http = service('allow-http', httpAddress, 'http-port', DEFAULTS.httpPort);
  // Triton's own words for 0 or less (its QA greps the log for them).
  if (Number(given.last('http-max-input-size')) <= 0) throw new UsageError('Error: --http-max-input-size must be greater than 0.');
  const bodyLimitBytes = given.integer('http-max-input-size', 1, Number.MAX_SAFE_INTEGER);
  const grpc = service('allow-grpc', given.last('grpc-address'), 'grpc-port', DEFAULTS.grpcPort);
  const maxReceiveMessageBytes = given.integer('grpc-max-input-size', 1, 2 ** 31 - 1);
  // Read even for a service turned off, as Triton reads them.
  const httpRestricted = restrictedApis(given, 'http-restricted-api');
  const grpcRestricted = restrictedApis(given, 'grpc-restricted-protocol');
  // Triton's --allow-client-shm, for both protocols (they share one registry); the frontends default to false, as Triton.
  const allowClientSharedMemory = given.boolean('allow-client-shm');
  const backends = backendSettings(given.all('backend-config'));
  const options: ServeOptions = {
    server: {
      ...repositoryOptions(given),
      exitTimeoutMs: exitTimeoutSecs * 1000,
      continueOnLoadError: !(given.boolean('exit-on-error') ?? true),
      maxInstancesPerModel: given.integer('max-instances-per-model', 1, Number.MAX_SAFE_INTEGER),
      metrics: allowMetrics && metrics,
      responseCache: responseCacheOptions(given.all('cache-config')),
      serverId: given.last('id'),
      modelLoadThreadCount: given.integer('model-load-thread-count', 0, 2 ** 31 - 1),
      modelLoadRetryCount: given.integer('model-load-retry-count', 0, 2 ** 31 - 1),
      strictReadiness: given.boolean('strict-readiness'),
      trace: traceConfig(given.all('trace-config')),
      rateLimit: rateLimitOptions(given.last('rate-limit'), given.all('rate-limit-resource')),
    },
    http: http && { ...http, bodyLimitBytes, restrictedApis: httpRestricted, allowClientSharedMemory },
    grpc: grpc && { ...grpc, maxReceiveMessageBytes, restrictedApis: grpcRestricted, allowClientSharedMemory },
    // As Triton, the metrics service listens where HTTP does unless told otherwise.
    metrics: service('allow-metrics', given.last('metrics-address') ?? httpAddress, 'metrics-port', DEFAULTS.metricsPort),
    openai: openaiOptions(given, httpAddress, bodyLimitBytes),
    backends: backends.settings,
    log: logSettings(given),
    ignored: [...given.names().flatMap((name) => {
      const why = IGNORED[name];
      return why ? [{ flag: `--${name}`, why }] : [];
    }), ...backends.ignored],
  };
  checkPortCollisions(options);
  return options;
}

/**
 * The OpenAI frontend's options; undefined (not served) without --openai-port, as
 * tritonserver has none. --http-max-input-size limits its bodies too, as it does in
 * Triton's OpenAI frontend.
 */
function openaiOptions(given: GivenFlags, host: string, bodyLimitBytes: number | undefined): ServeOptions['openai'] {
  const port = given.integer('openai-port', 0, 65_535);
  const chatTemplateFile = given.last('openai-chat-template');
  const defaultMaxTokens = given.integer('openai-default-max-tokens', 0, Number.MAX_SAFE_INTEGER);
  if (port === undefined) {
    if (chatTemplateFile !== undefined || defaultMaxTokens !== undefined) throw new UsageError('--openai-chat-template and --openai-default-max-tokens need --openai-port');
    return undefined;
  }
  return { host, port, bodyLimitBytes, chatTemplateFile, defaultMaxTokens };
}

/** Every --http-restricted-api (or --grpc-restricted-protocol) given, as one set of restrictions; undefined when none is. */
function restrictedApis(given: GivenFlags, flag: string): RestrictedApis | undefined {
  const specs = given.all(flag);
  if (specs.length === 0) return undefined;
  try {
    return parseRestrictedApis(flag, specs);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** The longest timer Node honours (2^31-1 ms), in whole seconds. */
const MAX_TIMER_SECS = Math.floor((2 ** 31 - 1) / 1000);
const CONTROL_MODES: readonly ModelControlMode[] = ['none', 'poll', 'explicit'];

function repositoryOptions(given: GivenFlags): Pick<ServerOptions, 'modelRepository' | 'modelControlMode' | 'startupModels' | 'pollIntervalMs' | 'modelConfigName'> {
  // Triton keeps repositories and startup models as sets.
  const modelRepository = [...new Set(given.all('model-repository'))];
  if (modelRepository.length === 0) throw new UsageError('--model-repository is required: the directory of models to serve');
  const modelControlMode = given.choice('model-control-mode', CONTROL_MODES) ?? 'none';
  const startupModels = [...new Set(given.all('load-model'))];
  if (startupModels.length && modelControlMode !== 'explicit') throw new UsageError('--load-model applies only with --model-control-mode=explicit');
  if (startupModels.includes('*') && startupModels.length > 1) throw new UsageError("--load-model=* loads every model, so it must be the only --load-model");
  const pollSecs = given.integer('repository-poll-secs', 1, MAX_TIMER_SECS);
  if (pollSecs !== undefined && modelControlMode !== 'poll') throw new UsageError('--repository-poll-secs applies only with --model-control-mode=poll');
  return {
    modelRepository,
    modelControlMode,
    startupModels: modelControlMode === 'explicit' ? startupModels : undefined,
    pollIntervalMs: pollSecs === undefined ? undefined : pollSecs * 1000,
    modelConfigName: given.last('model-config-name'),
  };
}

const METRICS_SETTINGS: Readonly<Record<string, keyof MetricsOptions>> = {
  counter_latencies: 'counterLatencies',
  summary_latencies: 'summaryLatencies',
  histogram_latencies: 'histogramLatencies',
};

/** Triton's --metrics-config <setting>=<value>, for the settings core has. */
function metricsOptions(settings: readonly string[]): MetricsOptions {
  const options: Record<string, boolean> = {};
  for (const setting of settings) {
    const [key, value] = splitSetting('metrics-config', setting, '<setting>=<value>');
    const option = METRICS_SETTINGS[key];
    if (!option) throw new UsageError(`--metrics-config ${key} is not supported by tritium: it has ${Object.keys(METRICS_SETTINGS).join(', ')}`);
    options[option] = parseBoolean(`metrics-config ${key}`, value);
  }
  return options;
}

/** Triton's --cache-config <cache>,<setting>=<value>: one cache, local or redis. */
function responseCacheOptions(settings: readonly string[]): ResponseCacheOptions | undefined {
  const caches = new Map<string, Map<string, string>>();
  for (const setting of settings) {
    const comma = setting.indexOf(',');
    if (comma <= 0) throw new UsageError(`--cache-config takes <cache>,<setting>=<value> (local,size=<bytes> or redis,host=<host>), got '${setting}'`);
    const [key, value] = splitSetting('cache-config', setting.slice(comma + 1), '<cache>,<setting>=<value>');
    const cache = setting.slice(0, comma);
    caches.set(cache, (caches.get(cache) ?? new Map()).set(key, value));
  }
  if (caches.size > 1) throw new UsageError(`--cache-config names ${[...caches.keys()].join(' and ')}: tritium runs one response cache`);
  const [only] = caches;
  // no --cache-config: no response cache
  if (only === undefined) return undefined;
  const [cache, values] = only;
  if (cache === 'local') return localCache(values);
  if (cache === 'redis') return redisCache(values);
  throw new UsageError(`--cache-config: unknown cache '${cache}' (tritium has local and redis)`);
}

function localCache(values: Map<string, string>): ResponseCacheOptions {
  refuseSettings('local', values, ['size']);
  const size = values.get('size');
  if (size === undefined) throw new UsageError('--cache-config local needs local,size=<bytes>');
  return { type: 'local', sizeBytes: parseInteger('cache-config local,size', size, 0, Number.MAX_SAFE_INTEGER) };
}

function redisCache(values: Map<string, string>): ResponseCacheOptions {
  refuseSettings('redis', values, ['host', 'port', 'password', 'socket_timeout']);
  const host = values.get('host');
  const port = values.get('port');
  // Triton's Redis cache requires both.
  if (host === undefined || port === undefined) throw new UsageError('--cache-config redis needs both redis,host=<host> and redis,port=<port>');
  const timeout = values.get('socket_timeout');
  return {
    type: 'redis',
    host,
    port: parseInteger('cache-config redis,port', port, 1, 65_535),
    password: values.get('password'),
    // Milliseconds, as in Triton's Redis cache; its 0 (wait for ever) takes the default here: a stuck cache must not stall requests.
    timeoutMs: timeout === undefined ? undefined : parseInteger('cache-config redis,socket_timeout', timeout, 0, 2 ** 31 - 1) || undefined,
  };
}

function refuseSettings(cache: string, values: Map<string, string>, known: readonly string[]): void {
  const unknown = [...values.keys()].find((key) => !known.includes(key));
  if (unknown) throw new UsageError(`--cache-config ${cache},${unknown} is not supported by tritium: the ${cache} cache takes ${known.join(', ')}`);
}

/** `<setting>=<value>`, both non-empty, split at the first '=' (a value may hold more). */
function splitSetting(flag: string, text: string, form: string): [string, string] {
  const equals = text.indexOf('=');
  if (equals <= 0 || equals === text.length - 1) throw new UsageError(`--${flag} takes ${form}, got '${text}'`);
  return [text.slice(0, equals), text.slice(equals + 1)];
}

function logSettings(given: GivenFlags): LogSettings {
  // Triton reads --log-verbose as a level, or true/false for 1/0.
  const verbose = given.last('log-verbose');
  const format = given.last('log-format');
  if (format !== undefined && format !== 'default' && format !== 'ISO8601') throw new UsageError(`--log-format must be default or ISO8601, got '${format}'`);
  return {
    log_file: given.last('log-file') ?? '',
    log_info: given.boolean('log-info') ?? true,
    log_warning: given.boolean('log-warning') ?? true,
    log_error: given.boolean('log-error') ?? true,
    log_verbose_level: verbose === undefined ? 0 : /^(true|false)$/i.test(verbose) ? Number(verbose.toLowerCase() === 'true') : parseInteger('log-verbose', verbose, 0, 2 ** 31 - 1),
    log_format: format ?? 'default',
  };
}

/** A fixed flag given at another value than tritium's behaviour is refused. */
function checkFixed(given: GivenFlags): void {
  for (const [name, { accepts, why }] of Object.entries(FIXED)) {
    const value = given.last(name);
    if (value === undefined) continue;
    const holds = typeof accepts === 'boolean' ? parseBoolean(name, value) === accepts : value.toLowerCase() === accepts;
    if (!holds) throw new UsageError(`--${name}=${value} is not supported by tritium (only ${String(accepts)}): ${why}`);
  }
}

/** As Triton: two services on one address cannot share a port (0 picks a free one each). */
function checkPortCollisions(options: ServeOptions): void {
  const services = (['http', 'grpc', 'metrics', 'openai'] as const).flatMap((name) => {
    const address = options[name];
    return address && address.port !== 0 ? [{ name, address }] : [];
  });
  for (const [i, first] of services.entries()) {
    for (const second of services.slice(i + 1)) {
      const [a, b] = [first.address, second.address];
      if (a.host === b.host && a.port === b.port) {
        throw new UsageError(`--${first.name}-port and --${second.name}-port are both ${a.port} on ${a.host}: each service needs its own port`);
      }
    }
  }
}

/** Triton's boolean values: true/on/1 and false/off/0, in any case. */
function parseBoolean(flag: string, value: string): boolean {
  const lower = value.toLowerCase();
  if (['true', 'on', '1'].includes(lower)) return true;
  if (['false', 'off', '0'].includes(lower)) return false;
  throw new UsageError(`--${flag} must be true or false, got '${value}'`);
}

function parseInteger(flag: string, value: string, min: number, max: number): number {
  const number = /^[+-]?\d+$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isSafeInteger(number) || number < min || number > max) {
    throw new UsageError(`--${flag} must be an integer from ${min} to ${max}, got '${value}'`);
  }
  return number;
}
