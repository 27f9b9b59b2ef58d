import { closeSync, openSync, writeFileSync, writeSync } from 'node:fs';

/**
 * One trace file as Triton writes it: a JSON array. Traces written as they come open
 * `path` (truncating it) with '[', add ',' between groups and ']' at close; a batch of
 * traces for `log_frequency` or an exhausted `trace_count` goes to `path.<index>` as an
 * array of its own. Writes are synchronous, as Triton's, and only sampled traces reach here.
 */
export class TraceFile {
  private fd: number | undefined;
  private nextIndex = 0;

  constructor(readonly path: string) {}

  /** `traces`: comma-joined trace entries. */
  append(traces: string): void {
    if (this.fd === undefined) {
      this.fd = openSync(this.path, 'w');
      writeSync(this.fd, '[' + traces);
    } else {
      writeSync(this.fd, ',' + traces);
    }
  }

  writeIndexed(traces: string): void {
    writeFileSync(`${this.path}.${this.nextIndex++}`, `[${traces}]`);
  }

  close(): void {
    if (this.fd === undefined) return;
    writeSync(this.fd, ']');
    closeSync(this.fd);
    this.fd = undefined;
  }
}
