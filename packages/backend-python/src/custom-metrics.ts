import type { CustomMetricFamily as CoreFamily } from '@tritium/core/backend';

/** A Python model's custom metric family (pb_utils.MetricFamily). */
export interface CustomMetricFamily {
  readonly name: string;
  readonly description: string;
  readonly kind: 'counter' | 'gauge' | 'histogram';
  /** By their labels as JSON: instances of one model that make the same metric share it, as in Triton. */
  readonly metrics: Map<string, CustomMetric>;
}

export interface CustomMetric {
  readonly labels: Readonly<Record<string, string>>;
  /** Counter and gauge: the value. Histogram: the sum of observations. */
  value: number;
  /** Histogram only: upper bounds and the count of observations at or below each. */
  readonly buckets?: readonly number[];
  readonly bucketCounts?: number[];
  count: number;
}

/**
 * The custom metrics Python models report, kept for an exporter to read (Triton shows
 * them on its metrics endpoint). A stub names its metrics by its own ids; this maps
 * them to shared metrics by family and labels.
 */
export class CustomMetrics {
  readonly families = new Map<string, CustomMetricFamily>();

  family(name: string, description: string, kind: CustomMetricFamily['kind']): void {
    if (!this.families.has(name)) this.families.set(name, { name, description, kind, metrics: new Map() });
  }

  metric(familyName: string, labels: Record<string, string>, buckets?: readonly number[]): CustomMetric | undefined {
    const family = this.families.get(familyName);
    if (!family) return undefined;
    const key = JSON.stringify(Object.entries(labels).sort());
    let metric = family.metrics.get(key);
    if (!metric) {
      metric = { labels, value: 0, count: 0, ...(buckets ? { buckets: [...buckets], bucketCounts: buckets.map(() => 0) } : {}) };
      family.metrics.set(key, metric);
    }
    return metric;
  }

  /** The families as core's CustomMetricFamily, for export. */
  snapshot(): CoreFamily[] {
    return [...this.families.values()].map((family) => ({ ...family, metrics: [...family.metrics.values()] }));
  }

  static change(metric: CustomMetric, op: string, value: number): void {
    if (op === 'increment') metric.value += value;
    else if (op === 'set') metric.value = value;
    else if (op === 'observe') {
      metric.value += value;
      metric.count++;
      metric.buckets?.forEach((bound, i) => {
        if (value <= bound) metric.bucketCounts![i]!++;
      });
    }
  }
}
