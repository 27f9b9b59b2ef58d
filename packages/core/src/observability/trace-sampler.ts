import type { TraceFile } from './trace-file.js';
import { invalidReason, isTracing, type TraceSettings } from './trace-settings.js';

/**
 * One setting in force (the global one, or a model's), as Triton's TraceSetting: it
 * samples one request in `trace_rate` while `trace_count` lasts, and collects the traces
 * it sampled until they go to its file. A setting that is replaced is retired: what it
 * holds is written at once, and traces it sampled that end later are written as they end.
 */
export class TraceSampler {
  private seen = 0;
  private remaining: number;
  private created = 0;
  private collected = 0;
  /** Traces collected and not yet written. */
  private pending: string[] = [];
  private retired = false;
  /** Whether the settings sample by rate: a level, a non-zero rate and, in mode 'triton', a file. With a level but no rate, only continued traces are taken. */
  private readonly active: boolean;

  constructor(
    readonly settings: TraceSettings,
    private readonly file: TraceFile | undefined,
  ) {
    this.remaining = settings.trace_count;
    this.active = isTracing(settings) && invalidReason(settings) === undefined;
  }

  /** trace_count as it stands, what the settings answer. */
  get count(): number {
    return this.remaining;
  }

  /**
   * Whether to trace the request arriving now. `continued`: the request continues a
   * caller's trace (OpenTelemetry mode), which Triton traces whenever the level is on,
   * whatever the rate and count; it still counts for the rate, and takes from the count
   * when it falls on the rate.
   */
  sample(continued = false): boolean {
    if (this.retired || !isTracing(this.settings)) return false;
    if (!continued && (!this.active || this.remaining === 0)) return false;
    // A rate of 0 (OpenTelemetry mode at start) samples nothing by rate.
    const onRate = this.settings.trace_rate !== 0 && ++this.seen % this.settings.trace_rate === 0 && this.remaining !== 0;
    if (onRate) {
      if (this.remaining > 0) this.remaining--;
      this.created++;
    }
    return onRate || continued;
  }

  /** A sampled trace ended: `entries` is its JSON entries (and its child traces'), comma-joined. */
  collect(entries: string): void {
    // A trace may have no entry (TENSORS alone, for a request refused before it was queued).
    if (entries !== '') this.pending.push(entries);
    this.collected++;
    const frequency = this.settings.log_frequency;
    // As Triton: a batch goes to the next indexed file when the count is spent and every sampled trace is in, or every log_frequency traces.
    if ((this.remaining === 0 && this.collected === this.created) || (frequency !== 0 && this.pending.length >= frequency)) {
      this.file?.writeIndexed(this.take());
    } else if (this.retired) {
      this.flush();
    }
  }

  /** Replaced by another setting (or the server stops): writes what it holds. */
  retire(): void {
    this.retired = true;
    this.flush();
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    const traces = this.take();
    if (this.settings.log_frequency !== 0) this.file?.writeIndexed(traces);
    else this.file?.append(traces);
  }

  private take(): string {
    const traces = this.pending.join(',');
    this.pending = [];
    return traces;
  }
}
