import { stabilityLatency, type LevelResult } from './measurement.js';
import type { PerfOptions } from './perf-options.js';

const us = (value: number) => `${Math.round(value)} usec`;

/** perf_analyzer's "*** Measurement Settings ***" block. */
export function settingsReport(options: PerfOptions, serviceKind: string): string {
  return [
    '*** Measurement Settings ***',
    `  Batch size: ${options.batchSize}`,
    `  Service Kind: ${serviceKind}`,
    '  Using "time_windows" mode for stabilization',
    `  Measurement window: ${options.measurementIntervalMs} msec`,
    options.load.kind === 'concurrency'
      ? `  Using asynchronous calls for inference`
      : `  Using uniform distribution on request generation`,
    `  Stabilizing using ${latencyName(options.percentile)} latency`,
    '',
  ].join('\n');
}

/** One level's block, as perf_analyzer prints it: the client's view, then the server's. */
export function levelReport(result: LevelResult, options: PerfOptions): string {
  const lines = [
    result.mode === 'concurrency' ? `Request concurrency: ${result.level}` : `Request Rate: ${result.level} inference requests per seconds`,
    '  Client: ',
    `    Request count: ${result.requestCount}`,
    `    Throughput: ${fixed(result.throughput)} infer/sec`,
  ];
  if (options.percentile !== undefined) lines.push(`    p${options.percentile} latency: ${us(result.percentilesUs.get(options.percentile)!)}`);
  else lines.push(`    Avg latency: ${us(result.avgUs)} (standard deviation ${us(result.stdUs)})`);
  for (const p of [50, 90, 95, 99]) lines.push(`    p${p} latency: ${us(result.percentilesUs.get(p)!)}`);
  const wait = result.avgUs - result.sendUs - result.recvUs;
  if (options.protocol === 'http') lines.push(`    Avg HTTP time: ${us(result.avgUs)} (send/recv ${us(result.sendUs + result.recvUs)} + response wait ${us(wait)})`);
  if (options.protocol === 'grpc') lines.push(`    Avg gRPC time: ${us(result.avgUs)} ((un)marshal request/response ${us(result.sendUs + result.recvUs)} + response wait ${us(wait)})`);
  const s = result.server;
  const cache = s.cacheHitCount + s.cacheMissCount > 0 ? ` + cache hit/miss ${us(s.cacheUs)}` : '';
  lines.push(
    '  Server: ',
    `    Inference count: ${s.inferenceCount}`,
    `    Execution count: ${s.executionCount}`,
    ...(cache ? [`    Cache hit count: ${s.cacheHitCount}`, `    Cache miss count: ${s.cacheMissCount}`] : []),
    `    Successful request count: ${s.successCount}`,
    `    Avg request latency: ${us(s.requestUs)} (overhead ${us(s.overheadUs)} + queue ${us(s.queueUs)}${cache} + compute input ${us(s.computeInputUs)} + compute infer ${us(s.computeInferUs)} + compute output ${us(s.computeOutputUs)})`,
  );
  return `${lines.join('\n')}\n\n`;
}

/** The closing summary: one line per level. */
export function summaryReport(results: readonly LevelResult[], options: PerfOptions): string {
  const name = options.percentile === undefined ? 'Average' : `p${options.percentile}`;
  const lines = [`Inferences/Second vs. Client ${name} Batch Latency`];
  for (const r of results) {
    const level = r.mode === 'concurrency' ? `Concurrency: ${r.level}` : `Request Rate: ${r.level}`;
    lines.push(`${level}, throughput: ${fixed(r.throughput)} infer/sec, latency ${us(stabilityLatency(r, options.percentile))}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The progress line of one measurement window. */
export function passReport(trial: number, window: LevelResult, percentile: number | undefined): string {
  return `  Pass [${trial}] throughput: ${fixed(window.throughput)} infer/sec. ${latencyName(percentile, true)} latency: ${us(stabilityLatency(window, percentile))}`;
}

function latencyName(percentile: number | undefined, capital = false): string {
  if (percentile !== undefined) return `p${percentile}`;
  return capital ? 'Avg' : 'average';
}

function fixed(value: number): string {
  return value.toFixed(2).replace(/\.?0+$/, '');
}
