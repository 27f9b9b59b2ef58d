import { readFile, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { InferenceServer, parseModelConfig, printModelConfig, type ModelConfig, type NormalizedModelConfig } from '@tritium/core';
import { runSubcommand, type CommandStreams } from '../cli/subcommand.js';
import { UsageError } from '../cli/usage-error.js';
import { InProcessClient, problemsLogger } from '../perf/inprocess-client.js';
import { measureLevel } from '../perf/measurement.js';
import { requestInputs } from '../perf/perf-inputs.js';
import { flagUsage } from '../perf/perf-options.js';
import { analyzePlot } from './analyze-plot.js';
import { ANALYZE_FLAGS, parseAnalyzeArguments, type AnalyzeOptions } from './analyze-options.js';
import { batchingCandidates, best, candidateConfig, describeCandidate, placementCandidates, rowsTable, stageWinner, type Candidate, type Row } from './search.js';

/** Stability as `tritium perf`'s, looser: short windows, at most five of them per level. */
const STABILITY_PERCENTAGE = 20;
const MAX_TRIALS = 5;

/** `tritium analyze [options]`: resolves with its exit status (2 for a command line that cannot run, 1 for a failed run or no config within the budget). */
export function analyzeMain(argv: readonly string[], streams: CommandStreams = { out: process.stdout, err: process.stderr }): Promise<number> {
  return runSubcommand('analyze', argv, streams, parseAnalyzeArguments, analyzeUsage, (options) => analyze(options, streams));
}

async function analyze(options: AnalyzeOptions, streams: CommandStreams): Promise<number> {
  let server: InferenceServer | undefined;
  try {
    const base = await repositoryConfig(options);
    server = await InferenceServer.start({ modelRepository: options.modelRepository, modelControlMode: 'explicit', logger: problemsLogger(streams.err) });
    const rows = await search(server, base, options, streams);
    const chosen = best(rows, options.latencyBudgetMs);
    // The report goes to stdout when the config has a file of its own, else beside the progress.
    const report = options.outputFile ? streams.out : streams.err;
    report.write(rowsTable(rows, chosen));
    if (options.plotFile) await writeFile(options.plotFile, analyzePlot(rows, chosen, options.latencyBudgetMs, `tritium analyze: ${options.model}`));
    if (!chosen) {
      streams.err.write(`tritium analyze: no candidate's p99 latency is within --latency-budget-ms ${options.latencyBudgetMs}: no config written\n`);
      return 1;
    }
    report.write(`Chosen: #${chosen.index} at concurrency ${chosen.concurrency}: ${chosen.throughput.toFixed(1)} infer/sec, p99 ${(chosen.p99Us / 1000).toFixed(3)} ms\n`);
    const text = printModelConfig(candidateConfig(base, chosen.candidate));
    if (options.outputFile) await writeFile(options.outputFile, text);
    else streams.out.write(text);
    return 0;
  } finally {
    await server?.stop();
  }
}

/** The model's config.pbtxt as written; a model the search cannot vary is refused. */
async function repositoryConfig(options: AnalyzeOptions): Promise<ModelConfig> {
  const path = join(options.modelRepository, options.model, 'config.pbtxt');
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new UsageError(`model '${options.model}': cannot read ${path} (tritium analyze varies the model's config.pbtxt): ${(error as Error).message}`);
  }
  const config = parseModelConfig(text, path);
  if (config.sequence_batching) throw new UsageError(`model '${options.model}' is sequence-batched: tritium analyze does not tune sequence models`);
  if (config.ensemble_scheduling) throw new UsageError(`model '${options.model}' is an ensemble: tune its steps one by one`);
  if (config.model_transaction_policy?.decoupled) throw new UsageError(`model '${options.model}' is decoupled: tritium analyze does not tune decoupled models`);
  // tritium perf takes such shapes from --shape; analyze has no such option yet.
  const variable = (config.input ?? []).find((input) => (input.dims ?? []).some((dim) => Number(dim) < 0));
  if (variable) throw new UsageError(`model '${options.model}' input '${variable.name}' has variable dims: tritium analyze tunes models with fixed input dims only (use tritium perf --shape)`);
  return config;
}

/**
 * The quick search: the placements (instances, intra-op threads) with dynamic batching off,
 * then, from the best of them under the budget, dynamic batching's delays and batch sizes;
 * at most --max-candidates configs in all, each loaded and measured at each --concurrency.
 */
async function search(server: InferenceServer, base: ModelConfig, options: AnalyzeOptions, streams: CommandStreams): Promise<Row[]> {
  const client = new InProcessClient(server);
  try {
    await server.loadModel(options.model, { config: base });
  } catch (error) {
    throw new Error(`model '${options.model}': ${(error as Error).message}`, { cause: error });
  }
  const normalized: NormalizedModelConfig = await server.modelConfig(options.model);
  const description = await client.describe(options.model);
  const requests = (await requestInputs(description, { batchSize: 1, shapes: new Map(), inputData: 'random' })).map((set) => client.prepare(options.model, undefined, set));
  const rows: Row[] = [];
  let index = 0;
  const measure = async (candidates: readonly Candidate[]) => {
    const measured: Row[] = [];
    for (const candidate of candidates) {
      if (index >= options.maxCandidates) break;
      index++;
      streams.err.write(`Candidate ${index}: ${describeCandidate(candidate)}\n`);
      await server.loadModel(options.model, { config: candidateConfig(base, candidate) });
      for (const concurrency of options.concurrency) {
        const settings = { model: options.model, batchSize: 1, measurementIntervalMs: options.measurementIntervalMs, stabilityPercentage: STABILITY_PERCENTAGE, maxTrials: MAX_TRIALS };
        const result = await measureLevel(client, requests, 'concurrency', concurrency, settings, () => {});
        measured.push({ index, candidate, concurrency, throughput: result.throughput, p99Us: result.percentilesUs.get(99)!, stable: result.stable });
      }
    }
    rows.push(...measured);
    return measured;
  };
  const placement = stageWinner(await measure(placementCandidates(normalized, availableParallelism())), options.latencyBudgetMs);
  if (placement) await measure(batchingCandidates(normalized, placement.candidate));
  await server.unloadModel(options.model);
  return rows;
}

/** `tritium analyze --help`. */
export function analyzeUsage(): string {
  const lines = [
    'Usage: tritium analyze -m <model> --model-repository <path> [options]',
    '',
    "Searches a model's instance count, dynamic batching and (ONNX) intra-op threads, as model_analyzer's quick search,",
    'measuring each candidate config in-process, and writes the best as a config.pbtxt.',
    '',
    'Options:',
    ...flagUsage(ANALYZE_FLAGS),
  ];
  return `${lines.join('\n')}\n`;
}
