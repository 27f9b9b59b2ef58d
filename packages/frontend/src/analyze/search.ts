import type { ModelConfig, NormalizedModelConfig } from '@tritium/core';

/** One candidate config, as the search varies it from the repository's. */
export interface Candidate {
  readonly instances: number;
  /** ONNX models: the intra_op_thread_count parameter; undefined: as the repository's config has it. */
  readonly intraOpThreads?: number;
  /** Dynamic batching on, with this max_batch_size and max_queue_delay_microseconds; undefined: off. */
  readonly batching?: { readonly maxBatchSize: number; readonly delayUs: number };
}

/** One candidate measured at one concurrency level. */
export interface Row {
  /** The candidate's place in the search, from 1. */
  readonly index: number;
  readonly candidate: Candidate;
  readonly concurrency: number;
  /** Inferences per second. */
  readonly throughput: number;
  readonly p99Us: number;
  readonly stable: boolean;
}

const QUEUE_DELAYS_US = [0, 100, 1000];

/** The repository's config with the candidate's instances, threads and batching in place. */
export function candidateConfig(base: ModelConfig, candidate: Candidate): ModelConfig {
  const { dynamic_batching: _, ...rest } = base;
  const parameters = { ...base.parameters };
  if (candidate.intraOpThreads !== undefined) parameters['intra_op_thread_count'] = { string_value: String(candidate.intraOpThreads) };
  return {
    ...rest,
    instance_group: [{ kind: 'KIND_CPU', count: candidate.instances }],
    ...(Object.keys(parameters).length ? { parameters } : {}),
    ...(candidate.batching
      ? { max_batch_size: candidate.batching.maxBatchSize, dynamic_batching: { max_queue_delay_microseconds: candidate.batching.delayUs } }
      : {}),
  };
}

/**
 * The first stage of the quick search: each instance count from 1 to the cores, and for an
 * ONNX model intra-op threads 1 and the cores, leaving out the pairs whose threads
 * (instances × intra-op threads) are more than the cores; dynamic batching off.
 */
export function placementCandidates(config: NormalizedModelConfig, cores: number): Candidate[] {
  const onnx = config.backend === 'onnxruntime';
  const threads = onnx ? [...new Set([1, cores])] : [undefined];
  const candidates: Candidate[] = [];
  for (let instances = 1; instances <= cores; instances++) {
    for (const intraOpThreads of threads) {
      if (intraOpThreads !== undefined && instances * intraOpThreads > cores) continue;
      candidates.push(intraOpThreads === undefined ? { instances } : { instances, intraOpThreads });
    }
  }
  return candidates;
}

/**
 * The second stage, from the first stage's best placement, for a model that batches: dynamic
 * batching on with each max_queue_delay_microseconds (0, 100, 1000) and max_batch_size (the
 * model's, and the powers of 4 from 4 below it).
 */
export function batchingCandidates(config: NormalizedModelConfig, placement: Candidate): Candidate[] {
  if (config.max_batch_size <= 0) return [];
  const sizes = new Set<number>();
  for (let size = 4; size < config.max_batch_size; size *= 4) sizes.add(size);
  sizes.add(config.max_batch_size);
  return QUEUE_DELAYS_US.flatMap((delayUs) => [...sizes].map((maxBatchSize) => ({ ...placement, batching: { maxBatchSize, delayUs } })));
}

/** The rows no other row beats in both throughput and p99 latency (ties kept). */
export function front(rows: readonly Row[]): Set<Row> {
  const dominated = (row: Row) =>
    rows.some((other) => other.throughput >= row.throughput && other.p99Us <= row.p99Us && (other.throughput > row.throughput || other.p99Us < row.p99Us));
  return new Set(rows.filter((row) => !dominated(row)));
}

/** The highest throughput whose p99 is within the budget (any p99 without one); undefined when none is. */
export function best(rows: readonly Row[], budgetMs: number | undefined): Row | undefined {
  const within = rows.filter((row) => budgetMs === undefined || row.p99Us <= budgetMs * 1000);
  return within.reduce<Row | undefined>((top, row) => (top === undefined || row.throughput > top.throughput ? row : top), undefined);
}

/** What a stage passes on: its best row, or where none is within the budget its lowest p99. */
export function stageWinner(rows: readonly Row[], budgetMs: number | undefined): Row | undefined {
  return best(rows, budgetMs) ?? rows.reduce<Row | undefined>((low, row) => (low === undefined || row.p99Us < low.p99Us ? row : low), undefined);
}

/** The report's table: every row, `*` on the front, `<` on the chosen one. */
export function rowsTable(rows: readonly Row[], chosen: Row | undefined): string {
  const onFront = front(rows);
  const header = ['#', 'instances', 'intra-op', 'max batch', 'dynamic batching', 'concurrency', 'infer/sec', 'p99 ms', 'front'];
  const lines = rows.map((row) => [
    String(row.index),
    String(row.candidate.instances),
    row.candidate.intraOpThreads === undefined ? '-' : String(row.candidate.intraOpThreads),
    row.candidate.batching ? String(row.candidate.batching.maxBatchSize) : '-',
    row.candidate.batching ? `delay ${row.candidate.batching.delayUs} us` : 'off',
    String(row.concurrency),
    row.throughput.toFixed(1),
    (row.p99Us / 1000).toFixed(3) + (row.stable ? '' : '?'),
    (onFront.has(row) ? '*' : '') + (row === chosen ? ' <- chosen' : ''),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((line) => line[i]!.length)));
  const format = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd();
  return [format(header), ...lines.map(format)].join('\n') + '\n';
}

/** A candidate in words, for the progress lines and the plot. */
export function describeCandidate(candidate: Candidate): string {
  const threads = candidate.intraOpThreads === undefined ? '' : `, intra_op_thread_count ${candidate.intraOpThreads}`;
  const batching = candidate.batching
    ? `, dynamic batching (max_batch_size ${candidate.batching.maxBatchSize}, max_queue_delay_microseconds ${candidate.batching.delayUs})`
    : ', no dynamic batching';
  return `${candidate.instances} instance${candidate.instances === 1 ? '' : 's'}${threads}${batching}`;
}
