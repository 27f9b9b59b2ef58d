import { Counter, Gauge, Registry, Summary } from 'prom-client';
import type { Backend, CustomMetric } from '../contract/backend.js';
import { BucketHistogram } from './bucket-histogram.js';
import { FAILURE_REASONS } from './failure-reason.js';
import type { LatencyObserver, ModelStatisticsRecorder } from './statistics.js';
import { registerSystemMetrics } from './system-metrics.js';

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
  servedVersions(): MeteredVersion[];
  backends(): Backend[];
}

/**
 * What the metrics read of one served model version (ServedModelVersion is one): only
 * this, so that observability need not import the model layer above it.
 */
export interface MeteredVersion {
  readonly context: { readonly name: string };
  readonly version: number;
  readonly statistics: Pick<ModelStatisticsRecorder, 'current' | 'failures' | 'batchStats'>;
  readonly loadDurationMs: number;
  pendingCount(): number;
}

const LABELS = ['model', 'version'] as const;
const QUANTILES = [0.5, 0.9, 0.95, 0.99];
/** 10 µs to about 21 s, doubling. */
const MICROSECOND_BUCKETS = Array.from({ length: 22 }, (_, i) => 10 * 2 ** i);
const MILLISECOND_BUCKETS = Array.from({ length: 18 }, (_, i) => 2 ** i);

type Labels = { model: string; version: string };
const labelsOf = (served: MeteredVersion): Labels => ({ model: served.context.name, version: String(served.version) });

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
  /** Models' own families, by name: the label names each was registered with, and its values at the last scrape. */
  private readonly custom = new Map<string, { labelNames: string[]; latest: CustomMetric[] }>();
  /** Every metric name this server registered, removed again by close() (the registry may be the application's). */
  private readonly registered: string[] = [];

  constructor(
    options: MetricsOptions,
    private readonly source: MetricsSource,
  ) {
    const registry = (this.registry = options.registry ?? new Registry());
    const before = new Set(registry.getMetricsAsArray().map((metric) => metric.name));
    const versions = () => source.servedVersions();
    // Series per served version, read when scraped: one value, or one per value of `extraLabel`.
    const fromStatistics = (
      name: string,
      help: string,
      kind: 'counter' | 'gauge',
      read: (served: MeteredVersion) => number | Array<[string | number, number]>,
      extraLabel?: string,
    ) => {
      const Metric = kind === 'counter' ? Counter : Gauge;
      new Metric({
        name,
        help,
        labelNames: extraLabel ? [...LABELS, extraLabel] : LABELS,
        registers: [registry],
        collect(this: Counter | Gauge) {
          this.reset();
          for (const served of versions()) {
            const value = read(served);
            if (typeof value === 'number') (this as Gauge).inc(labelsOf(served), value);
            else for (const [label, count] of value) (this as Gauge).inc({ ...labelsOf(served), [extraLabel!]: label }, count);
          }
        },
      });
    };
    const stats = (served: MeteredVersion) => served.statistics.current();
    fromStatistics('nv_inference_request_success', 'Number of successful inference requests, all batch sizes', 'counter', (s) => stats(s).inference_stats.success.count);
    fromStatistics(
      'nv_inference_request_failure',
      'Number of failed inference requests, all batch sizes',
      'counter',
      (s) => FAILURE_REASONS.map((reason) => [reason, s.statistics.failures[reason]]),
      'reason',
    );
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
      // As Triton: successful requests only (a failure adds to the failure count alone).
      fromStatistics('nv_inference_request_duration_us', 'Cumulative inference request duration in microseconds', 'counter', (s) => us(stats(s).inference_stats.success.ns));
      fromStatistics('nv_inference_queue_duration_us', 'Cumulative inference queuing duration in microseconds', 'counter', (s) => us(stats(s).inference_stats.queue.ns));
      fromStatistics('nv_inference_compute_input_duration_us', 'Cumulative compute input duration in microseconds', 'counter', (s) => us(stats(s).inference_stats.compute_input.ns));
      fromStatistics('nv_inference_compute_infer_duration_us', 'Cumulative compute inference duration in microseconds', 'counter', (s) => us(stats(s).inference_stats.compute_infer.ns));
      fromStatistics('nv_inference_compute_output_duration_us', 'Cumulative inference compute output duration in microseconds', 'counter', (s) => us(stats(s).inference_stats.compute_output.ns));
    }
    // Triton's summaries cover a sliding minute (5 age buckets), not all time.
    const summary = (name: string, help: string) =>
      new Summary({ name, help, labelNames: LABELS, percentiles: QUANTILES, maxAgeSeconds: 60, ageBuckets: 5, registers: [registry] });
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
    fromStatistics(
      'tritium_inference_batch_executions',
      'Number of model executions of each batch size, as the scheduler formed them',
      'counter',
      (s) => [...s.statistics.batchStats()].map((batch) => [batch.batch_size, batch.compute_infer.count]),
      'batch_size',
    );
    registerSystemMetrics(registry, (name) => this.registered.push(name));
    for (const metric of registry.getMetricsAsArray()) if (!before.has(metric.name)) this.registered.push(metric.name);
  }

  /** Takes this server's metrics out of the registry, so the registry can serve another server later. */
  close(): void {
    for (const name of [...this.registered, ...this.custom.keys()]) this.registry.removeSingleMetric(name);
    this.registered.length = 0;
    this.custom.clear();
  }

  /** Takes one model version's per-request observations; none when no summary or histogram is on (counters cost nothing per request). */
  observerFor(model: string, version: number): LatencyObserver | undefined {
    const o = this.observed;
    if (Object.values(o).every((metric) => metric === undefined)) return undefined;
    const labels = { model, version: String(version) };
    const all = [o.requestSummary, o.queueSummary, o.computeSummary, o.firstResponse, o.request, o.queue, o.compute];
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
      release: () => {
        for (const metric of all) metric?.remove(labels);
      },
    };
  }

  /** The Prometheus text of everything registered (and the application's own metrics, when it gave its registry). */
  async text(): Promise<string> {
    this.registerCustomFamilies();
    return this.registry.metrics();
  }

  /**
   * Backends' own families (a Python model's pb_utils.MetricFamily), read once per scrape,
   * registered as they appear, and registered again when a metric brings a label the
   * family did not have (prom-client fixes a metric's label names when it is made).
   */
  private registerCustomFamilies(): void {
    for (const backend of this.source.backends()) {
      for (const family of backend.customMetrics?.() ?? []) {
        const metrics = [...family.metrics];
        // A histogram without its buckets (a Python model's) stays with its backend.
        if (family.kind === 'histogram' && !metrics.every((metric) => metric.histogram)) continue;
        const labelNames = [...new Set(metrics.flatMap((metric) => Object.keys(metric.labels)))];
        let known = this.custom.get(family.name);
        if (known && labelNames.every((name) => known!.labelNames.includes(name))) {
          known.latest = metrics;
          continue;
        }
        // A metric of that name the application registered itself wins.
        if (!known && this.registry.getSingleMetric(family.name)) continue;
        if (known) this.registry.removeSingleMetric(family.name);
        const entry = (known = { labelNames: [...new Set([...(known?.labelNames ?? []), ...labelNames])], latest: metrics });
        this.custom.set(family.name, entry);
        if (family.kind === 'histogram') {
          this.registry.registerMetric(customHistogram(family.name, family.description || family.name, entry) as never);
          continue;
        }
        const Metric = family.kind === 'counter' ? Counter : Gauge;
        new Metric({
          name: family.name,
          help: family.description || family.name,
          labelNames: entry.labelNames,
          registers: [this.registry],
          collect(this: Counter | Gauge) {
            this.reset();
            for (const metric of entry.latest) (this as Gauge).inc(metric.labels, metric.value);
          },
        });
      }
    }
  }
}

/** A backend's histogram as prom-client's Registry renders one: cumulative buckets, +Inf, _sum and _count per label set, read at each scrape. */
function customHistogram(name: string, help: string, entry: { latest: CustomMetric[] }) {
  return {
    name,
    help,
    type: 'histogram',
    aggregator: 'sum',
    get: () => ({
      name,
      help,
      type: 'histogram',
      aggregator: 'sum',
      values: entry.latest.flatMap(({ labels, histogram }) => {
        const { upperBounds, cumulativeCounts, sum, count } = histogram!;
        return [
          ...upperBounds.map((le, i) => ({ metricName: `${name}_bucket`, labels: { le, ...labels }, value: cumulativeCounts[i]! })),
          { metricName: `${name}_bucket`, labels: { le: '+Inf', ...labels }, value: count },
          { metricName: `${name}_sum`, labels, value: sum },
          { metricName: `${name}_count`, labels, value: count },
        ];
      }),
    }),
  };
}
