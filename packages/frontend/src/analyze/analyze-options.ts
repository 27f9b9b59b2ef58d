import { UsageError } from '../cli/usage-error.js';
import { integer, readFlags, type FlagTable } from '../perf/perf-options.js';

/** What `tritium analyze` searches and how it measures each candidate. */
export interface AnalyzeOptions {
  readonly model: string;
  readonly modelRepository: string;
  /** The p99 latency a chosen config must keep within, in milliseconds; undefined: the highest throughput wins. */
  readonly latencyBudgetMs?: number;
  /** Where the chosen config.pbtxt goes; undefined: stdout. */
  readonly outputFile?: string;
  /** Where the HTML plot of the rows goes; undefined: none. */
  readonly plotFile?: string;
  /** The concurrency levels each candidate is measured at. */
  readonly concurrency: readonly number[];
  readonly measurementIntervalMs: number;
  /** The most candidate configs measured, in search order. */
  readonly maxCandidates: number;
}

/** Each option built, with its value placeholder and its help line. */
export const ANALYZE_FLAGS: FlagTable = {
  help: { short: 'h', help: 'Print this usage and exit.' },
  'model-name': { short: 'm', value: '<model>', help: 'The model to tune. Required.' },
  'model-repository': { value: '<path>', help: 'The repository holding it (with its config.pbtxt). Required.' },
  'latency-budget-ms': { value: '<ms>', help: 'Choose the highest throughput whose p99 latency is within this (default: the highest throughput).' },
  output: { short: 'o', value: '<path>', help: 'Write the chosen config.pbtxt here (default: stdout, the report then going to stderr).' },
  plot: { value: '<path>', help: 'Also write a self-contained HTML page plotting each row: p99 latency against throughput, the front, the chosen row and the budget.' },
  concurrency: { value: '<n[,n...]>', help: 'The concurrency levels each candidate is measured at (default 1,8).' },
  'measurement-interval': { short: 'p', value: '<ms>', help: 'The length of one measurement window (default 300; up to 5 windows per level).' },
  'max-candidates': { value: '<n>', help: 'Measure at most this many candidate configs, in search order (default: all the search reaches).' },
};

/** Options asked for that are not built, refused by name. */
const NOT_BUILT: Readonly<Record<string, string>> = {
  protocol: 'candidates are always loaded and measured in-process',
  'batch-size': 'candidates are measured with requests of batch size 1',
};

/** Reads `tritium analyze`'s options (after `analyze`); undefined for --help. Throws UsageError naming the option at fault. */
export function parseAnalyzeArguments(argv: readonly string[]): AnalyzeOptions | undefined {
  const given = readFlags(argv, 'analyze', ANALYZE_FLAGS, NOT_BUILT);
  if (given.has('help')) return undefined;
  const model = given.get('model-name');
  if (!model) throw new UsageError('-m <model> is required');
  const modelRepository = given.get('model-repository');
  if (!modelRepository) throw new UsageError('--model-repository <path> is required');
  const budget = given.get('latency-budget-ms');
  const latencyBudgetMs = budget === undefined ? undefined : Number(budget);
  if (latencyBudgetMs !== undefined && !(Number.isFinite(latencyBudgetMs) && latencyBudgetMs > 0)) {
    throw new UsageError(`--latency-budget-ms must be a number of milliseconds greater than 0, got '${budget}'`);
  }
  const concurrency = (given.get('concurrency') ?? '1,8').split(',').map((text) => integer('--concurrency', text, 1, 1024));
  return {
    model,
    modelRepository,
    ...(latencyBudgetMs === undefined ? {} : { latencyBudgetMs }),
    ...(given.has('output') ? { outputFile: given.get('output') } : {}),
    ...(given.has('plot') ? { plotFile: given.get('plot') } : {}),
    concurrency: [...new Set(concurrency)].sort((a, b) => a - b),
    measurementIntervalMs: integer('--measurement-interval', given.get('measurement-interval') ?? '300', 10, 600_000),
    maxCandidates: integer('--max-candidates', given.get('max-candidates') ?? '1000', 1, 1000),
  };
}
