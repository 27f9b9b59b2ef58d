import type { CustomMetricFamily } from '@tritium/core/backend';

type Labels = Readonly<Record<string, string>>;

/** A histogram's state for one label set: cumulative counts per upper bound, sum and count. */
class Histogram {
  private readonly counts: number[];
  private sum = 0;
  private count = 0;

  constructor(private readonly upperBounds: readonly number[]) {
    this.counts = upperBounds.map(() => 0);
  }

  observe(value: number): void {
    for (let i = 0; i < this.upperBounds.length; i++) if (value <= this.upperBounds[i]!) this.counts[i]! += 1;
    this.sum += value;
    this.count += 1;
  }

  snapshot() {
    return { value: this.sum, histogram: { upperBounds: this.upperBounds, cumulativeCounts: [...this.counts], sum: this.sum, count: this.count } };
  }
}

// vLLM's buckets for its time to first token and time per output token histograms (seconds).
const FIRST_TOKEN_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];
const PER_TOKEN_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5];
const REQUEST_BUCKETS = [1, 2.5, 5, 10, 15, 20, 30, 40, 50, 60];

/** One model version's generation metrics, named as Triton's vLLM backend exports vLLM's, under `llamacpp:`. */
export class GenerationMetrics {
  private promptTokens = 0;
  private generationTokens = 0;
  private readonly firstToken = new Histogram(FIRST_TOKEN_BUCKETS);
  private readonly perToken = new Histogram(PER_TOKEN_BUCKETS);
  private readonly request = new Histogram(REQUEST_BUCKETS);

  constructor(readonly labels: Labels) {}

  prompt(tokens: number): void {
    this.promptTokens += tokens;
  }

  /** A token arrived `sinceStartMs` after the request started and `sincePreviousMs` after its previous token (undefined for the first). */
  token(sinceStartMs: number, sincePreviousMs: number | undefined): void {
    this.generationTokens += 1;
    if (sincePreviousMs === undefined) this.firstToken.observe(sinceStartMs / 1000);
    else this.perToken.observe(sincePreviousMs / 1000);
  }

  finished(durationMs: number): void {
    this.request.observe(durationMs / 1000);
  }

  families(): CustomMetricFamily[] {
    const one = (value: number) => [{ labels: this.labels, value }];
    return [
      { name: 'llamacpp:prompt_tokens_total', description: 'Number of prefill tokens processed.', kind: 'counter', metrics: one(this.promptTokens) },
      { name: 'llamacpp:generation_tokens_total', description: 'Number of generation tokens processed.', kind: 'counter', metrics: one(this.generationTokens) },
      { name: 'llamacpp:time_to_first_token_seconds', description: 'Histogram of time to first token in seconds.', kind: 'histogram', metrics: [{ labels: this.labels, ...this.firstToken.snapshot() }] },
      { name: 'llamacpp:time_per_output_token_seconds', description: 'Histogram of time per output token in seconds.', kind: 'histogram', metrics: [{ labels: this.labels, ...this.perToken.snapshot() }] },
      { name: 'llamacpp:e2e_request_latency_seconds', description: 'Histogram of end to end request latency in seconds.', kind: 'histogram', metrics: [{ labels: this.labels, ...this.request.snapshot() }] },
    ];
  }
}
