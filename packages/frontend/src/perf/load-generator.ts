import type { PerfClient, SequenceStep } from './perf-client.js';

/**
 * The requests answered in one window: each one's latency as the client saw it, and the
 * client's own part of them all, in microseconds. Plain numbers, no object per request,
 * so that the collector does not weigh on the rate measured.
 */
export interface Window {
  readonly latenciesUs: number[];
  sendUs: number;
  recvUs: number;
}

const emptyWindow = (): Window => ({ latenciesUs: [], sendUs: 0, recvUs: 0 });

/** How long the closed loop may hold the event loop (see yieldToEventLoop). */
const YIELD_EVERY_MS = 5;

/** For a sequence model: how long each sequence is, and how many the open loop keeps going at once. */
export interface SequenceLoad {
  readonly length: number;
  readonly count: number;
}

/**
 * Drives one load level until stopped: `concurrency` keeps that many requests outstanding
 * (closed loop: each answer sends the next), `request-rate` sends at constant intervals
 * whatever the answers (open loop). The prepared requests are sent in turn. Answers
 * collect until `takeWindow()` hands them over, so windows follow one another with no gap.
 * For a sequence model each closed-loop caller sends its own sequences one after another;
 * the open loop sends to `count` sequences in turn. A new sequence takes the next id.
 */
export class LoadGenerator<Prepared> {
  private window = emptyWindow();
  private running = true;
  private next = 0;
  private failure: Error | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly loops: Promise<void>[] = [];
  private timer: NodeJS.Timeout | undefined;
  private lastSequenceId = 0;
  private lastYield = performance.now();
  private pause: Promise<void> | undefined;

  constructor(
    private readonly client: PerfClient<Prepared>,
    private readonly requests: readonly Prepared[],
    mode: 'concurrency' | 'request-rate',
    level: number,
    private readonly sequences?: SequenceLoad,
  ) {
    if (mode === 'concurrency') for (let i = 0; i < level; i++) this.loops.push(this.closedLoop());
    else this.openLoop(level, performance.now());
  }

  /** The completions since the last call; throws the first request's failure, if any. */
  takeWindow(): Window {
    if (this.failure) throw this.failure;
    const window = this.window;
    this.window = emptyWindow();
    return window;
  }

  /** Stops sending and waits for the requests outstanding. */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    await Promise.all([...this.loops, ...this.inFlight]);
  }

  private async closedLoop(): Promise<void> {
    const sequence = this.sequenceSteps();
    while (this.running) {
      await this.send(sequence?.());
      await this.yieldToEventLoop();
    }
  }

  /**
   * Every few milliseconds, all callers wait for one turn of the event loop: a server that
   * answers within microtasks (an in-process model with no I/O) would otherwise keep the
   * loop from ever reaching the timers that end the windows.
   */
  private async yieldToEventLoop(): Promise<void> {
    if (!this.pause && performance.now() - this.lastYield < YIELD_EVERY_MS) return;
    this.pause ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      this.pause = undefined;
      this.lastYield = performance.now();
    });
    await this.pause;
  }

  /** The steps of one sequence after another, or undefined for a model without sequences. */
  private sequenceSteps(): (() => SequenceStep) | undefined {
    const length = this.sequences?.length;
    if (length === undefined) return undefined;
    let id = 0;
    let step = length;
    return () => {
      if (step === length) [id, step] = [++this.lastSequenceId, 0];
      step++;
      return { id, start: step === 1, end: step === length };
    };
  }

  /** Sends every request due by now (a late timer catches up), then sleeps until the next is due. */
  private openLoop(rate: number, start: number): void {
    const sequences = Array.from({ length: this.sequences?.count ?? 0 }, () => this.sequenceSteps()!);
    let sent = 0;
    const tick = () => {
      const due = Math.floor(((performance.now() - start) * rate) / 1000) + 1;
      for (; sent < due && this.running; sent++) {
        const request = this.send(sequences[sent % sequences.length]?.());
        this.inFlight.add(request);
        void request.finally(() => this.inFlight.delete(request));
      }
      if (this.running) this.timer = setTimeout(tick, Math.max(0, start + (sent * 1000) / rate - performance.now()));
    };
    tick();
  }

  private async send(sequence: SequenceStep | undefined): Promise<void> {
    const prepared = this.requests[this.next++ % this.requests.length]!;
    const start = performance.now();
    try {
      const times = await this.client.infer(prepared, sequence);
      const latencyUs = (performance.now() - start) * 1000;
      this.window.latenciesUs.push(latencyUs);
      this.window.sendUs += times.sendUs;
      this.window.recvUs += times.recvUs;
    } catch (error) {
      this.failure ??= error instanceof Error ? error : new Error(String(error));
      this.running = false;
    }
  }
}
