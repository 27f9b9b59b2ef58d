import { UsageError } from './usage-error.js';

/**
 * What --backend-config gives the official backends, keyed by backend name as the server's
 * `backendSettings` takes them (core hands each to the backend it loads by that name):
 * fields of pythonBackend()'s and onnxBackend()'s options.
 */
export type BackendSettings = {
  readonly python: {
    readonly interpreter?: string;
    readonly executionEnvironmentRoots: readonly string[];
    readonly startTimeoutMs?: number;
    readonly sharedMemoryDefaultBytes?: number;
    readonly sharedMemoryGrowthBytes?: number;
  };
  readonly onnxruntime: { readonly defaultMaxBatchSize?: number };
};

/** A --backend-config given that has no meaning here, with why. */
export interface IgnoredSetting {
  readonly flag: string;
  readonly why: string;
}

/** One --backend-config value: `<backend>,<key>=<value>`, or `<key>=<value>` (no backend) for every backend. */
interface BackendSetting {
  readonly backend?: string;
  readonly key: string;
  readonly value: string;
}

type Mutable<T> = { -readonly [K in keyof T]: Mutable<T[K]> };
type Apply = (settings: Mutable<BackendSettings>, setting: BackendSetting) => void;

const MiB = 1 << 20;
/** The longest timer Node honours (2^31-1 ms), in whole seconds. */
const MAX_TIMER_SECS = Math.floor((2 ** 31 - 1) / 1000);

/**
 * The settings with a meaning here, by backend and key (Triton's keys, and the python
 * backend's own interpreter and execution-env-root). Triton's python backend parses the
 * rest (thread-pool-size, shm-region-prefix-name, shm_message_queue_size...) for a stub
 * design tritium does not share; onnxruntime's thread settings belong to its own pools.
 */
const MEANINGS: Readonly<Record<string, Readonly<Record<string, Apply>>>> = {
  python: {
    interpreter: (s, { value }) => {
      s.python.interpreter = value;
    },
    'execution-env-root': (s, { value }) => {
      s.python.executionEnvironmentRoots.push(value);
    },
    // Triton's words for each refusal (python_be.cc); its default timeout is 30 s, tritium's stays 60 s.
    'stub-timeout-seconds': (s, setting) => {
      s.python.startTimeoutMs = 1000 * integerValue(setting, { min: 1, refusal: "stub-timeout-seconds can't be smaller than or equal to zero." }, MAX_TIMER_SECS);
    },
    // Triton checks 1 MiB but says "can't be smaller than 4 MiBs", a leftover of an older limit: the limit checked is named here.
    'shm-default-byte-size': (s, setting) => {
      s.python.sharedMemoryDefaultBytes = integerValue(setting, { min: MiB, refusal: `shm-default-byte-size can't be smaller than 1 MiB (${MiB} bytes)` });
    },
    'shm-growth-byte-size': (s, setting) => {
      s.python.sharedMemoryGrowthBytes = integerValue(setting, { min: 1, refusal: "shm-growth-byte-size can't be smaller than or equal to zero." });
    },
  },
  onnxruntime: {
    // Any integer, as Triton's onnxruntime backend reads it; below 0 counts as 0 (no batching).
    'default-max-batch-size': (s, setting) => {
      s.onnxruntime.defaultMaxBatchSize = Math.max(0, integerValue(setting));
    },
  },
};

/**
 * Triton's --backend-config values, as settings for the official backends the server loads.
 * As in Triton, a setting without a backend applies to every backend, and a backend's own
 * setting overrides it whatever their order. A setting with no meaning here is accepted
 * and listed as ignored (the command warns of it), so Triton's command lines run.
 */
export function backendSettings(args: readonly string[]): { settings: BackendSettings; ignored: IgnoredSetting[] } {
  const settings: Mutable<BackendSettings> = { python: { executionEnvironmentRoots: [] }, onnxruntime: {} };
  const ignored: IgnoredSetting[] = [];
  const parsed = args.map(parseSetting);
  for (const setting of [...parsed.filter((s) => !s.backend), ...parsed.filter((s) => s.backend)]) {
    const backends = setting.backend ? [setting.backend] : Object.keys(MEANINGS);
    const applies = backends.map((backend) => MEANINGS[backend]?.[setting.key]).filter((apply) => apply !== undefined);
    for (const apply of applies) apply(settings, setting);
    if (applies.length === 0) ignored.push({ flag: `--backend-config ${setting.backend ? `${setting.backend},` : ''}${setting.key}`, why: noMeaning(setting.backend) });
  }
  return { settings, ignored };
}

/** Triton's ParseBackendConfigOption: the backend ends at the first ',', the key at the next '='; its texts for a value it cannot read. */
function parseSetting(arg: string): BackendSetting {
  const comma = arg.indexOf(',');
  if (comma === 0) {
    throw new UsageError(`No backend specified. --backend-config option format is <backend name>,<setting>=<value> or <setting>=<value>. Got ${arg}`);
  }
  const equals = arg.indexOf('=', comma + 1);
  const key = arg.slice(comma + 1, equals);
  const value = arg.slice(equals + 1);
  if (equals < 0 || !key || !value) throw new UsageError(`--backend-config option format is '<backend name>,<setting>=<value>'. Got ${arg}`);
  return { backend: comma > 0 ? arg.slice(0, comma) : undefined, key, value };
}

function noMeaning(backend: string | undefined): string {
  const keys = backend && MEANINGS[backend];
  if (keys) return `it has no meaning here (tritium's ${backend} backend takes ${Object.keys(keys).join(', ')})`;
  if (backend) return `it has no meaning here (tritium takes settings for ${Object.keys(MEANINGS).join(' and ')} only)`;
  return 'it has no meaning here for any backend';
}

/** An integer setting; one below `floor.min` is refused in Triton's words. */
function integerValue({ backend, key, value }: BackendSetting, floor?: { min: number; refusal: string }, max = Number.MAX_SAFE_INTEGER): number {
  const at = `--backend-config ${backend ? `${backend},` : ''}${key}=${value}`;
  const number = /^[+-]?\d+$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isSafeInteger(number)) throw new UsageError(`${at}: ${key} must be an integer`);
  if (floor && number < floor.min) throw new UsageError(`${at}: ${floor.refusal}`);
  if (number > max) throw new UsageError(`${at}: ${key} can't be larger than ${max}`);
  return number;
}
