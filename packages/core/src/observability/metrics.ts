import { Counter, Gauge, Registry, Summary } from 'prom-client';
import type { Backend } from '../backend/backend.js';
import type { ServedModelVersion } from '../model/served-model-version.js';
import { BucketHistogram } from './bucket-histogram.js';
import { FAILURE_REASONS } from './failure-reason.js';
import type { LatencyObserver } from './statistics.js';
import { SystemMetrics } from './system-metrics.js';

/** What server.metrics() exports; the switches are named after Triton's --metrics-config keys. */
export interface MetricsOptions {
  /** A prom-client Registry of the application's, so Tritium's metrics sit beside its own. Default: one of its own. */
  readonly registry?: Registry;
  /** Triton's cumulative latency counters (nv_inference_*_duration_us). Default true. */
  readonly counterLatencies?: boolean;
  /** Triton's latency summaries (nv_inference_*_summary_us, quantiles 0.5/0.9/0.95/0.99). Default false, as in Triton. */
  readonly summaryLatencies?: boolean;
  /**
   * Latency histograms: Triton's nv_inference_first_response_histogram_ms (decoupled
   * models), and beyond Triton request, queue and compute histograms, which unlike
   * summaries add up across replicas. Default false.
   */
  readonly histogramLatencies?: boolean;
}

/** Where the metrics read from at each scrape. */
export interface MetricsSource {
  servedVersions(): ServedModelVersion[];
  backends(): Backend[];
}

const LABELS = ['model', 'version'] as const;
const QUANTILES = [0.5, 0.9, 0.95, 0.99];
/** 10 µs to about 21 s, doubling. */
const MICROSECOND_BUCKETS = Array.from({ length: 22 }, (_, i) => 10 * 2 ** i);
const MILLISECOND_BUCKETS = Array.from({ length: 18 }, (_, i) => 2 ** i);

type Labels = { model: string; version: string };
const labelsOf = (served: ServedModelVersion): Labels => ({ model: served.context.name, version: String(served.version) });

/**
 * Prometheus metrics with Triton's names and labels, on prom-client. Counters and gauges
 * are read from the per-model statistics when scraped, so they cost nothing per request;
 * summaries and histograms take each observation through a LatencyObserver.
 */
export class ServerMetrics {
  readonly registry: Registry;
  private readonly observed: {
    requestSummary?: Summary;
    queueSummary?: Summary;
    computeSummary?: Summary;
    firstResponse?: BucketHistogram;
    request?: BucketHistogram;
    queue?: BucketHistogram;
    compute?: BucketHistogram;
  };
  private readonly custom = new Map<string, Counter | Gauge>();

  constructor(
    options: MetricsOptions,
    private readonly source: MetricsSource,
  ) {
    const registry = (this.registry = options.registry ?? new Registry());
    const versions = () => source.servedVersions();
    const fromStatistics = (name: string, help: string, kind: 'counter' | 'gauge', read: (served: ServedModelVersion) => number) => {
      const Metric = kind === 'counter' ? Counter : Gauge;
      new Metric({
        name,
        help,
        labelNames: LABELS,
        registers: [registry],
        collect(this: Counter | Gauge) {
          this.reset();
          for (const served of versions()) (this as Gauge).inc(labelsOf(served), read(served));
        },
      });
    };
    const stats = (served: ServedModelVersion) => served.statistics.current();
    fromStatistics('nv_inference_request_success', 'Number of successful inference requests, all batch sizes', 'counter', (s) => stats(s).inference_stats.success.count);
    new Counter({
      name: 'nv_inference_request_failure',
      help: 'Number of failed inference requests, all batch sizes',
      labelNames: [...LABELS, 'reason'],
      registers: [registry],
      collect() {
        this.reset();
        for (const served of versions()) {
          for (const reason of FAILURE_REASONS) this.inc({ ...labelsOf(served), reason }, served.statistics.failures[reason]);
        }
      },
    });
    fromStatistics('nv_inference_count', 'Number of inferences performed (batch of N counts N)', 'counter', (s) => stats(s).inference_count);
    fromStatistics('nv_inference_exec_count', 'Number of model executions performed', 'counter', (s) => stats(s).execution_count);
    fromStatistics('nv_inference_pending_request_count', 'Instantaneous number of pending requests awaiting execution per-model', 'gauge', (s) => s.pendingCount());
    fromStatistics('nv_cache_num_hits_per_model', 'Number of cache hits per model', 'counter', (s) => stats(s).inference_stats.cache_hit.count);
    fromStatistics('nv_cache_num_misses_per_model', 'Number of cache misses per model', 'counter', (s) => stats(s).inference_stats.cache_miss.count);
    fromStatistics('nv_cache_hit_duration_per_model', 'Total cache hit duration per model, in microseconds', 'counter', (s) => stats(s).inference_stats.cache_hit.ns / 1000);
    fromStatistics('nv_cache_miss_duration_per_model', 'Total cache miss (lookup and insertion) duration per model, in microseconds', 'counter', (s) => stats(s).inference_stats.cache_miss.ns / 1000);
    fromStatistics('nv_model_load_duration_secs', 'Model load time in seconds', 'gauge', (s) => s.loadDurationMs / 1000);
    if (options.counterLatencies ?? true) {
      const us = (ns: number) => ns / 1000;
      fromStatistics('nv_inference_request_duration_us', 'Cumulative inference request duration in microseconds', 'counter', (s) => {
        const { success, fail } = stats(s).inference_stats;
        return us(success.ns + fail.ns);
      });
      fromStatistics('nv_inference_queue_duration_us', 'Cumulative inference queuing duration in microseconds', 'counter', (s) => us(stats(s).inference_stats.queue.ns));
      fromStatistics('nv_inference_compute_input_duration_us', 'Cumulative compute input duration in microseconds', 'counter', (s) => us(stats(s).inference_stats.compute_input.ns));
      fromStatistics('nv_inference_compute_infer_duration_us', 'Cumulative compute inference duration in microseconds', 'counter', (s) => us(stats(s).inference_stats.compute_infer.ns));
      fromStatistics('nv_inference_compute_output_duration_us', 'Cumulative inference compute output duration in microseconds', 'counter', (s) => us(stats(s).inference_stats.compute_output.ns));
    }
    const summary = (name: string, help: string) => new Summary({ name, help, labelNames: LABELS, percentiles: QUANTILES, registers: [registry] });
    const histogram = (name: string, help: string, buckets: number[]) => new BucketHistogram(name, help, buckets, registry);
    const summaries = options.summaryLatencies ?? false;
    const histograms = options.histogramLatencies ?? false;
    this.observed = {
      ...(summaries && {
        requestSummary: summary('nv_inference_request_summary_us', 'Summary of inference request duration in microseconds'),
        queueSummary: summary('nv_inference_queue_summary_us', 'Summary of inference queuing duration in microseconds'),
        computeSummary: summary('nv_inference_compute_infer_summary_us', 'Summary of compute inference duration in microseconds'),
      }),
      ...(histograms && {
        firstResponse: histogram('nv_inference_first_response_histogram_ms', 'Duration from request to first response in milliseconds', MILLISECOND_BUCKETS),
        request: histogram('tritium_inference_request_histogram_us', 'Inference request duration in microseconds', MICROSECOND_BUCKETS),
        queue: histogram('tritium_inference_queue_histogram_us', 'Inference queuing duration in microseconds', MICROSECOND_BUCKETS),
        compute: histogram('tritium_inference_compute_infer_histogram_us', 'Compute inference duration in microseconds', MICROSECOND_BUCKETS),
      }),
    };
    // Beyond Triton: the batch sizes the schedulers formed, from the statistics' batch_stats.
    new Counter({
      name: 'tritium_inference_batch_executions',
      help: 'Number of model executions of each batch size, as the scheduler formed them',
      labelNames: [...LABELS, 'batch_size'],
      registers: [registry],
      collect() {
        this.reset();
        for (const served of versions()) {
          for (const batch of served.statistics.batchStats()) this.inc({ ...labelsOf(served), batch_size: batch.batch_size }, batch.compute_infer.count);
        }
      },
    });
    new SystemMetrics(registry);
  }

  /** Takes one model version's per-request observations; none when no summary or histogram is on (counters cost nothing per request). */
  observerFor(model: string, version: number): LatencyObserver | undefined {
    const o = this.observed;
    if (Object.values(o).every((metric) => metric === undefined)) return undefined;
    const labels = { model, version: String(version) };
    const [requestSummary, queueSummary, computeSummary] = [o.requestSummary, o.queueSummary, o.computeSummary].map((metric) => metric?.labels(labels));
    const [firstResponse, request, queue, compute] = [o.firstResponse, o.request, o.queue, o.compute].map((metric) => metric?.labels(labels));
    return {
      request: (us) => {
        requestSummary?.observe(us);
        request?.observe(us);
      },
      queue: (us) => {
        queueSummary?.observe(us);
        queue?.observe(us);
      },
      computeInfer: (us) => {
        computeSummary?.observe(us);
        compute?.observe(us);
      },
      firstResponse: (us) => firstResponse?.observe(us / 1000),
    };
  }

  /** The Prometheus text of everything registered (and the application's own metrics, when it gave its registry). */
  async text(): Promise<string> {
    this.registerCustomFamilies();
    return this.registry.metrics();
  }

  /** Backends' own families (a Python model's pb_utils.MetricFamily), registered as they appear. */
  private registerCustomFamilies(): void {
    for (const backend of this.source.backends()) {
      for (const family of backend.customMetrics?.() ?? []) {
        if (family.kind === 'histogram' || this.custom.has(family.name) || this.registry.getSingleMetric(family.name)) continue;
        const labelNames = [...new Set([...family.metrics].flatMap((metric) => Object.keys(metric.labels)))];
        const read = () => [...(backend.customMetrics?.() ?? [])].find((f) => f.name === family.name);
        const Metric = family.kind === 'counter' ? Counter : Gauge;
        const metric = new Metric({
          name: family.name,
          help: family.description || family.name,
          labelNames,
          registers: [this.registry],
          collect(this: Counter | Gauge) {
            this.reset();
            for (const entry of read()?.metrics ?? []) (this as Gauge).inc(entry.labels, entry.value);
          },
        });
        this.custom.set(family.name, metric);
      }
    }
  }
}
