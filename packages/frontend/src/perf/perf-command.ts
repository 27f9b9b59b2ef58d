import { writeFile } from 'node:fs/promises';
import { runSubcommand, type CommandStreams } from '../cli/subcommand.js';
import { UsageError } from '../cli/usage-error.js';
import { GrpcPerfClient } from './grpc-perf-client.js';
import { HttpPerfClient } from './http-perf-client.js';
import { InProcessClient } from './inprocess-client.js';
import { measureLevel, type LevelResult, type MeasureSettings } from './measurement.js';
import type { ModelDescription, PerfClient } from './perf-client.js';
import { perfCsv } from './perf-csv.js';
import { requestInputs } from './perf-inputs.js';
import { PERF_FLAGS, flagUsage, parsePerfArguments, type PerfOptions } from './perf-options.js';
import { latencyPlot } from './perf-plot.js';
import { levelReport, passReport, settingsReport, summaryReport } from './perf-report.js';
import { sharedMemoryInputs, type SharedMemoryInputs } from './shared-memory-inputs.js';

/** `tritium perf [options]`: resolves with its exit status (2 for a command line that cannot run, 1 for a failed run). */
export function perfMain(argv: readonly string[], streams: CommandStreams = { out: process.stdout, err: process.stderr }): Promise<number> {
  return runSubcommand('perf', argv, streams, parsePerfArguments, perfUsage, (options) => perf(options, streams));
}

async function perf(options: PerfOptions, streams: CommandStreams): Promise<number> {
  let client: PerfClient | undefined;
  let shm: SharedMemoryInputs | undefined;
  try {
    client = await connect(options, streams);
    const description = await describe(client, options);
    const inputs = await requestInputs(description, options);
    if (options.sharedMemory) {
      shm = await sharedMemoryInputs(inputs);
      await client.registerSharedMemory!(shm);
    }
    const requests = inputs.map((set, i) => client!.prepare(options!.model, options!.version, set, shm?.placements[i]));
    const settings = description.sequence ? { ...options, sequences: { length: options.sequenceLength, count: options.numSequences } } : options;
    const results = await sweep(client, requests, settings, streams);
    if (options.csvFile) await writeFile(options.csvFile, perfCsv(results));
    if (options.plotFile) await writeFile(options.plotFile, latencyPlot(results, `${options.model}: latency against throughput (${client.kind})`));
    return 0;
  } finally {
    if (shm) await client?.unregisterSharedMemory!(shm).catch(() => {});
    await shm?.remove();
    await client?.close();
  }
}

function connect(options: PerfOptions, streams: CommandStreams): Promise<PerfClient> | PerfClient {
  if (options.protocol === 'inprocess') return InProcessClient.start(options.modelRepository!, options.streaming, streams.err);
  return options.protocol === 'grpc' ? new GrpcPerfClient(options.url, options.streaming) : new HttpPerfClient(options.url);
}

/** The model's inputs and kind, or an error naming the model; a decoupled model needs --streaming. */
async function describe(client: PerfClient, options: PerfOptions): Promise<ModelDescription> {
  let description;
  try {
    description = await client.describe(options.model, options.version);
  } catch (error) {
    throw new Error(`model '${options.model}'${options.version ? ` version ${options.version}` : ''}: ${(error as Error).message}`, { cause: error });
  }
  if (description.decoupled && !options.streaming) throw new UsageError(`model '${options.model}' is decoupled (zero or more responses per request): give --streaming`);
  return description;
}

/** Measures each level in turn, printing its block as it ends, then the summary. */
async function sweep(client: PerfClient, requests: readonly unknown[], options: PerfOptions & MeasureSettings, streams: CommandStreams): Promise<LevelResult[]> {
  streams.out.write(`${settingsReport(options, client.kind)}\n`);
  const results: LevelResult[] = [];
  for (const level of options.load.levels) {
    streams.err.write(`${options.load.kind === 'concurrency' ? 'Request concurrency' : 'Request rate'}: ${level}\n`);
    const result = await measureLevel(client, requests, options.load.kind, level, options, (trial, window) => streams.err.write(`${passReport(trial, window, options.percentile)}\n`));
    if (!result.stable) {
      streams.err.write(`  Failed to obtain stable measurement within ${options.maxTrials} measurement windows for ${options.load.kind} ${level}: reporting the last windows (try a longer --measurement-interval)\n`);
    }
    streams.out.write(levelReport(result, options));
    results.push(result);
  }
  streams.out.write(`${summaryReport(results, options)}`);
  return results;
}

/** `tritium perf --help`. */
export function perfUsage(): string {
  const lines = ['Usage: tritium perf -m <model> [options]', '', "Measures a model's throughput and latency under load, as Triton's perf_analyzer.", '', 'Options:', ...flagUsage(PERF_FLAGS)];
  return `${lines.join('\n')}\n`;
}
