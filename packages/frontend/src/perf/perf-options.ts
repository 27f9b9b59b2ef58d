import { parseArgs } from 'node:util';
import { UsageError } from '../cli/usage-error.js';

export type Protocol = 'inprocess' | 'http' | 'grpc';

/** One load level of a sweep: closed-loop concurrency or an open-loop request rate (requests/s). */
export type LoadMode = { readonly kind: 'concurrency'; readonly levels: readonly number[] } | { readonly kind: 'request-rate'; readonly levels: readonly number[] };

/** What `tritium perf` measures and how, as perf_analyzer's options say it. */
export interface PerfOptions {
  readonly model: string;
  readonly version?: string;
  readonly batchSize: number;
  readonly protocol: Protocol;
  /** host:port of the server (http and grpc). */
  readonly url: string;
  /** The repository an in-process server loads. */
  readonly modelRepository?: string;
  readonly load: LoadMode;
  /** Input name → its dims without the batch dimension. */
  readonly shapes: ReadonlyMap<string, readonly number[]>;
  /** 'random', 'zero', or a JSON file in perf_analyzer's input-data format. */
  readonly inputData: string;
  readonly measurementIntervalMs: number;
  /** The latency percentile that stability and the summary use; undefined: the average. */
  readonly percentile?: number;
  readonly stabilityPercentage: number;
  readonly maxTrials: number;
  /** A sequence model's requests per sequence, and the sequences the open loop keeps going. */
  readonly sequenceLength: number;
  readonly numSequences: number;
  /** Requests on a stream (in-process inferStream, gRPC's ModelStreamInfer): how a decoupled model is driven. */
  readonly streaming: boolean;
  /** --shared-memory system: inputs placed in a registered region, not sent. */
  readonly sharedMemory: boolean;
  readonly csvFile?: string;
  readonly plotFile?: string;
}

/** Each option built, with its short alias (perf_analyzer's), its value placeholder, and its help line. */
export const PERF_FLAGS: FlagTable = {
  help: { short: 'h', help: 'Print this usage and exit.' },
  'model-name': { short: 'm', value: '<model>', help: 'The model to measure. Required.' },
  'model-version': { short: 'x', value: '<version>', help: 'Its version (default: the server picks).' },
  'batch-size': { short: 'b', value: '<n>', help: 'The batch size of each request (default 1).' },
  protocol: { short: 'i', value: '<inprocess|http|grpc>', help: 'How requests reach the server (default http; inprocess needs --model-repository).' },
  url: { short: 'u', value: '<host:port>', help: 'The server (default localhost:8000 for http, localhost:8001 for grpc).' },
  'model-repository': { value: '<path>', help: 'In-process: the model repository the server loads.' },
  'concurrency-range': { value: '<start:end:step>', help: 'Closed loop: keep this many requests outstanding, per level (default 1).' },
  'request-rate-range': { value: '<start:end:step>', help: 'Open loop: send this many requests per second at constant intervals, per level.' },
  shape: { value: '<name:d1,d2,...>', help: "An input's dims without the batch dimension, for its variable dims; repeatable." },
  'input-data': { value: '<random|zero|file.json>', help: "The inputs' data: random (default), zero, or perf_analyzer's JSON input-data file." },
  'measurement-interval': { short: 'p', value: '<ms>', help: 'The length of one measurement window (default 5000).' },
  percentile: { value: '<n>', help: 'Stabilize and summarize on this latency percentile (default: the average).' },
  'stability-percentage': { short: 's', value: '<n>', help: 'Stable when the last 3 windows vary within n% in throughput and latency (default 10).' },
  'max-trials': { short: 'r', value: '<n>', help: 'The most windows per level before reporting it unstable (default 10).' },
  'sequence-length': { value: '<n>', help: 'Sequence models: the requests in each sequence (default 20).' },
  'num-of-sequences': { value: '<n>', help: 'Sequence models, open loop: the sequences sent to at once, in turn (default 4).' },
  streaming: { help: 'Send the requests on a stream, each complete at its final response: needed for a decoupled model (grpc or inprocess).' },
  'shared-memory': { value: '<none|system>', help: 'system: the inputs are written once into a system shared-memory region registered with the server, and requests name it (http and grpc; the server needs --allow-client-shm=true).' },
  'latency-report-file': { short: 'f', value: '<path>', help: "Write perf_analyzer's CSV report." },
  plot: { value: '<path.html>', help: 'Write an HTML page that plots the latency percentiles against throughput.' },
};

/** perf_analyzer's options that tritium perf does not have (yet), refused by name. */
const NOT_BUILT: Readonly<Record<string, string>> = {
  'sequence-id-range': 'sequence ids count up from 1',
  'sequence-length-variation': 'every sequence has --sequence-length requests',
  'serial-sequences': 'a closed-loop caller already sends its sequences one after another',
  'output-shared-memory-size': 'outputs always come back in the response',
  'service-kind': 'pick the protocol with -i inprocess|http|grpc',
  async: 'requests are always asynchronous: --concurrency-range sets how many are outstanding',
  sync: 'requests are always asynchronous: --concurrency-range sets how many are outstanding',
  'measurement-mode': 'only time windows are measured (--measurement-interval)',
  'measurement-request-count': 'only time windows are measured (--measurement-interval)',
  'request-distribution': 'the open loop sends at constant intervals',
  'latency-threshold': 'every level of the range is measured',
  'binary-search': 'every level of the range is measured',
  'collect-metrics': 'GPU metrics are not collected',
  'verbose-csv': 'GPU metrics are not collected',
  'string-data': 'BYTES inputs are random or zero strings, or from --input-data',
  'string-length': 'BYTES inputs are random or zero strings, or from --input-data',
  'request-intervals': 'the open loop sends at constant intervals',
  'periodic-concurrency-range': 'use --concurrency-range',
};

/** A command's options: each one's short alias, its value placeholder (none for a switch), and its help line. */
export type FlagTable = Readonly<Record<string, { readonly short?: string; readonly value?: string; readonly help: string }>>;

/**
 * A subcommand's options (`tritium <command> ...`), by long name, values as given; a
 * `repeatable` option's values joined by newlines. Refuses a positional, an unknown option
 * and one of `notBuilt` (saying why), a missing value or a switch given one.
 */
export function readFlags(argv: readonly string[], command: string, flags: FlagTable, notBuilt: Readonly<Record<string, string>>, repeatable: readonly string[] = []): Map<string, string> {
  const short = Object.fromEntries(Object.entries(flags).flatMap(([name, flag]) => (flag.short ? [[flag.short, name]] : [])));
  const options = Object.fromEntries(
    Object.entries(flags).map(([name, flag]) => [name, { type: flag.value ? ('string' as const) : ('boolean' as const), ...(flag.short ? { short: flag.short } : {}) }]),
  );
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  const given = new Map<string, string>();
  for (const token of tokens) {
    if (token.kind === 'positional') throw new UsageError(`unexpected argument '${token.value}': every value follows its option`);
    if (token.kind === 'option-terminator') throw new UsageError("unexpected '--'");
    const name = short[token.name] ?? token.name;
    const flag = flags[name];
    if (!flag) {
      const why = notBuilt[name];
      throw new UsageError(why ? `${token.rawName} is not supported by tritium ${command}: ${why}` : `unknown option '${token.rawName}' (tritium ${command} --help lists the options)`);
    }
    if (flag.value && (token.value === undefined || token.value === '')) throw new UsageError(`${token.rawName} needs a value ${flag.value}`);
    if (!flag.value && token.value !== undefined) throw new UsageError(`${token.rawName} takes no value`);
    given.set(name, repeatable.includes(name) && given.has(name) ? `${given.get(name)}\n${token.value}` : (token.value ?? ''));
  }
  return given;
}

/** The usage's lines for each option: its names and placeholder, then its help. */
export function flagUsage(flags: FlagTable): string[] {
  return Object.entries(flags).flatMap(([name, flag]) => [`  ${flag.short ? `-${flag.short}, ` : ''}--${name}${flag.value ? ` ${flag.value}` : ''}`, `      ${flag.help}`]);
}

/** Reads `tritium perf`'s options (after `perf`); undefined for --help. Throws UsageError naming the option at fault. */
export function parsePerfArguments(argv: readonly string[]): PerfOptions | undefined {
  // --shape repeats; its values are kept joined.
  const given = readFlags(argv, 'perf', PERF_FLAGS, NOT_BUILT, ['shape']);
  if (given.has('help')) return undefined;
  const model = given.get('model-name');
  if (!model) throw new UsageError('-m <model> is required');
  const protocol = choice(given.get('protocol') ?? 'http', ['inprocess', 'http', 'grpc'], '-i');
  const modelRepository = given.get('model-repository');
  if (protocol === 'inprocess' && !modelRepository) throw new UsageError('-i inprocess needs --model-repository <path>');
  if (protocol !== 'inprocess' && modelRepository) throw new UsageError('--model-repository is for -i inprocess; a remote server has its own');
  if (given.has('streaming') && protocol === 'http') throw new UsageError('--streaming needs -i grpc or -i inprocess: HTTP has no stream of requests');
  const sharedMemory = given.get('shared-memory') ?? 'none';
  if (sharedMemory === 'cuda') throw new UsageError('--shared-memory cuda is not supported by tritium perf: there is no CUDA shared memory');
  if (choice(sharedMemory, ['none', 'system'], '--shared-memory') === 'system' && protocol === 'inprocess') {
    throw new UsageError('--shared-memory system needs -i http or -i grpc: in-process inputs are not copied anyway');
  }
  if (given.has('concurrency-range') && given.has('request-rate-range')) throw new UsageError('give --concurrency-range or --request-rate-range, not both');
  const rate = given.get('request-rate-range');
  const load: LoadMode =
    rate === undefined
      ? { kind: 'concurrency', levels: range('--concurrency-range', given.get('concurrency-range') ?? '1', true) }
      : { kind: 'request-rate', levels: range('--request-rate-range', rate, false) };
  const percentile = given.has('percentile') ? integer('--percentile', given.get('percentile')!, 1, 99) : undefined;
  return {
    model,
    ...(given.has('model-version') ? { version: given.get('model-version') } : {}),
    batchSize: integer('-b', given.get('batch-size') ?? '1', 1, 1 << 20),
    protocol,
    url: given.get('url') ?? (protocol === 'grpc' ? 'localhost:8001' : 'localhost:8000'),
    ...(modelRepository ? { modelRepository } : {}),
    load,
    shapes: shapes(given.get('shape')),
    inputData: given.get('input-data') ?? 'random',
    measurementIntervalMs: integer('--measurement-interval', given.get('measurement-interval') ?? '5000', 1, 3_600_000),
    ...(percentile === undefined ? {} : { percentile }),
    stabilityPercentage: integer('--stability-percentage', given.get('stability-percentage') ?? '10', 0, 1000),
    maxTrials: integer('--max-trials', given.get('max-trials') ?? '10', 1, 1000),
    sequenceLength: integer('--sequence-length', given.get('sequence-length') ?? '20', 1, 1 << 30),
    streaming: given.has('streaming'),
    sharedMemory: sharedMemory === 'system',
    numSequences: integer('--num-of-sequences', given.get('num-of-sequences') ?? '4', 1, 1 << 20),
    ...(given.has('latency-report-file') ? { csvFile: given.get('latency-report-file') } : {}),
    ...(given.has('plot') ? { plotFile: given.get('plot') } : {}),
  };
}

/**
 * perf_analyzer's start:end:step: end defaults to start, step to 1; concurrency levels are
 * whole numbers. An end of 0 (search until a latency threshold) is not built.
 */
function range(flag: string, text: string, whole: boolean): number[] {
  const parts = text.split(':');
  const numbers = parts.map((part) => Number(part));
  const bad = parts.length > 3 || numbers.some((n, i) => !Number.isFinite(n) || n < 0 || (whole && !Number.isInteger(n)) || parts[i] === '');
  if (bad) throw new UsageError(`${flag} must be start[:end[:step]] of ${whole ? 'whole' : ''} numbers, got '${text}'`);
  const [start, end = start, step = 1] = numbers as [number, number?, number?];
  if (start <= 0) throw new UsageError(`${flag}: start must be greater than 0, got '${text}'`);
  if (end === 0) throw new UsageError(`${flag}: an end of 0 searches up to --latency-threshold, which tritium perf does not have`);
  if (end < start) throw new UsageError(`${flag}: end must not be less than start, got '${text}'`);
  if (step <= 0) throw new UsageError(`${flag}: step must be greater than 0, got '${text}'`);
  const levels: number[] = [];
  // The small epsilon keeps a fractional rate's last level (0.1 steps add up inexactly).
  for (let level = start; level <= end + 1e-9; level += step) levels.push(Number(level.toFixed(6)));
  return levels;
}

export function integer(flag: string, text: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) throw new UsageError(`${flag} must be a whole number from ${min} to ${max}, got '${text}'`);
  return value;
}

function choice<T extends string>(text: string, choices: readonly T[], flag: string): T {
  const chosen = choices.find((c) => c === text.toLowerCase());
  if (!chosen) throw new UsageError(`${flag} must be one of ${choices.join(', ')}, got '${text}'`);
  return chosen;
}

/** Each --shape NAME:d1,d2 (the name may itself hold colons: the dims follow the last). */
function shapes(joined: string | undefined): Map<string, number[]> {
  const result = new Map<string, number[]>();
  for (const text of joined ? joined.split('\n') : []) {
    const colon = text.lastIndexOf(':');
    const dims = text.slice(colon + 1).split(',').map(Number);
    if (colon <= 0 || dims.some((d) => !Number.isInteger(d) || d < 0)) throw new UsageError(`--shape must be <name>:<d1>,<d2>,... of whole numbers, got '${text}'`);
    result.set(text.slice(0, colon), dims);
  }
  return result;
}
