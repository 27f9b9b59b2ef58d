import { choiceParameter } from '@tritium/core/backend';
import type { ModelConfig } from '@tritium/core/backend';
import type { SessionThread } from './onnx-session.js';
import { OverlappingRuns } from './overlapping-runs.js';

/** The model parameter that places a model's sessions: "auto" (default), "worker" or "inline". */
export const EXECUTION_THREAD_PARAMETER = 'execution_thread';

/**
 * Longest run (lower quartile) "auto" ever puts on the event loop, however slow the
 * handoff measures: far inside the 1–2 ms loop-delay budget, so a loaded loop (where a
 * handoff can measure hundreds of µs) never takes a millisecond run onto itself.
 */
export const INLINE_MAX_MICROSECONDS = 400;

/**
 * Longest run (lower quartile, timed on the event loop) "auto" lets hold the loop: three
 * quarters of a 2 ms loop-delay budget, the loop turning between runs. On a widened model,
 * a size whose runs measure too long for INLINE_MAX_MICROSECONDS on the pool, but under
 * twice this, is timed inline before it is decided: a pool thread's intra-op threads
 * sleep between operators, so a run there can take half as long again as the same run
 * inline.
 */
export const LOOP_HOLD_MAX_MICROSECONDS = 1500;

/**
 * Windows on the pool after a size's timing inline did not fit before it is timed inline
 * again (the machine's speed changes), doubled after each such timing up to
 * 2^MAX_TRIAL_BACKOFF times: each holds the loop for a window of runs too long for it.
 */
export const WINDOWS_BETWEEN_TRIALS = 8;
export const MAX_TRIAL_BACKOFF = 4;

/**
 * Shortest run (lower quartile, on one intra-op thread) for which "auto" gives a
 * model's sessions the machine's cores as intra-op threads: long enough that
 * onnxruntime splits its operators and a woken thread's ~10 µs is small beside the run.
 * A lone request then uses every core, as raw onnxruntime-node's default does (an MLP's
 * batch-64 run takes half the time); shorter runs keep one thread, so many small models
 * add no threads.
 */
export const WIDE_FROM_MICROSECONDS = 100;

/** Runs of each session left out before measuring: the first ones pay for warming up (JIT, allocations). */
export const WARMUP_RUNS = 4;

/** Runs of one input size measured before "auto" decides where that size runs. */
export const MEASURED_RUNS = 16;

/**
 * Windows of MEASURED_RUNS in a row that must fit the loop before a size on the pool moves
 * inline: one window of a size close to the limit dips under it by chance sooner or later.
 */
export const FITTING_WINDOWS_TO_MOVE = 3;

/** One measured worker run: its input's size, the model's own time in onnxruntime, and what the handoff added. */
export interface RunSample {
  readonly inputBytes: number;
  readonly runMicroseconds: number;
  readonly handoffMicroseconds: number;
}

/** What "auto" learnt of one input size (a power-of-two band of input bytes). */
interface SizeBand {
  readonly runs: number[];
  readonly handoffs: number[];
  inline?: boolean;
  /**
   * On the pool: why, when it was sent there (the latest one's reason is the state's), the
   * windows in a row since that fit the loop, and the windows left before it may be timed
   * inline again.
   */
  pool?: { readonly why: string; readonly order: number; fittingWindows: number; windowsToTrial: number };
  /** Timings inline that found the size does not fit: each doubles the wait before the next. */
  misfits?: number;
  /**
   * Timed inline: a trial (not yet `inline`), or a size a trial sent inline, which goes on
   * being timed. Its runs there (after the warm-up ones), the pool's round trip (run and
   * handoff, as measured) a trial must beat, the windows in a row too long for the loop,
   * and whether its last window's runs held the loop for INLINE_MAX_MICROSECONDS or more.
   */
  timed?: { readonly runs: number[]; warmUps: number; readonly poolRoundTrip: number; readonly measured: string; longWindows: number; holdsLoop: boolean };
}

/**
 * Where one model's runs happen. "worker" and "inline" are fixed: every run on the
 * execution pool's threads, or on the thread that calls infer(). "auto" runs on the pool
 * (so loading never blocks the event loop) and measures each size of input, in
 * power-of-two bands of bytes: a band whose runs cost less than handing them to a
 * thread then runs inline, on one session the model's instances share, and every other
 * band stays on the pool. So a model's batch-1 requests can run inline while its large
 * batches keep the loop free.
 *
 * A band runs inline when its run (lower quartile, inside onnxruntime: the model's own
 * cost, which a busy machine's preemption only adds to) is under INLINE_MAX_MICROSECONDS
 * and, on one intra-op thread, under the median handoff (the round trip less the run)
 * too: there the pool's threads are the only way to use more than one core. A band
 * whose runs take WIDE_FROM_MICROSECONDS or more on one thread widens the model first
 * (`widenTo`): its pooled sessions get the cores as intra-op threads, every band not
 * inline is measured again on them, and the inline session gets them too once a band
 * measured so goes inline; while most of a widened model's pooled runs overlap, its
 * sessions go back to the pool's width (overlapping-runs.ts). A band too long for that on
 * the pool, but short enough that it may fit the loop, is timed inline for a window (a
 * trial): it stays inline when its run there fits LOOP_HOLD_MAX_MICROSECONDS and beats
 * the pool's round trip, and is timed there again every WINDOWS_BETWEEN_TRIALS windows on
 * the pool otherwise. A band inline by a trial whose runs there take
 * INLINE_MAX_MICROSECONDS or more takes the loop only for a lone run, one that serves
 * every request the model has in flight: while others wait or run, its runs go to the
 * pool, whose threads run them side by side. A band on the pool
 * goes on being measured, window after window, and goes inline once FITTING_WINDOWS_TO_MOVE
 * windows in a row say it fits: a machine busy when a size was first measured does not
 * keep it off the loop for good. A band a trial sent inline goes on being timed, and goes
 * back to the pool after FITTING_WINDOWS_TO_MOVE windows in a row too long for the loop;
 * any other band inline stays so. `reason` says where the model runs and why, for its state.
 */
export class ThreadChoice {
  private readonly bands = new Map<number, SizeBand>();
  /** Intra-op threads once widened; undefined: sessions keep the ones they opened with. */
  private wideThreads: number | undefined;
  /** Whether a widened model's pooled runs overlap, so that its sessions go back to the pool's width meanwhile. */
  private readonly overlap = new OverlappingRuns({ runs: MEASURED_RUNS, toChange: FITTING_WINDOWS_TO_MOVE, maxBackoff: MAX_TRIAL_BACKOFF });
  /** Why the model was widened. */
  private widenWhy = '';
  /** Bands sent to the pool so far, to tell the latest. */
  private poolDecisions = 0;
  private inlineWhy = '';
  /** Set when the model's inline session could not be opened: every band stays on the pool. */
  private inlineRefused: string | undefined;
  /** Set when the inline session cannot time its runs (onnxruntime-web's public API): no size is timed inline again. */
  private inlineUntimed = false;
  /**
   * Set once a size measured on widened sessions runs or is timed inline: the inline
   * session keeps the cores from then on, since reopening it narrow and wide again would
   * hold the loop at each open.
   */
  private inlineWide = false;
  /** Why the model runs where it does: the rule while measuring, then what was decided. */
  reason: string;
  constructor(
    readonly requested: SessionThread | 'auto',
    /** Told the reason each time "auto" decides something. */
    private readonly onDecided: (reason: string) => void = () => {},
    /** Intra-op threads the model's sessions may widen to: the cores, or undefined where the config sets its own count or the pool already gives each session the cores. */
    private readonly widenTo?: number,
  ) {
    this.reason =
      requested === 'auto'
        ? 'auto: on worker threads while its first runs are measured; inline for sizes of input whose runs cost less than the handoff to a worker'
        : `${requested} sessions (parameter ${EXECUTION_THREAD_PARAMETER})`;
  }

  static fromConfig(config: ModelConfig, onDecided?: (reason: string) => void, widenTo?: number): ThreadChoice {
    const value = choiceParameter(config, EXECUTION_THREAD_PARAMETER, { auto: '', worker: "on the execution pool's threads", inline: "on the event loop's thread" }) ?? 'auto';
    return value === 'auto' ? new ThreadChoice('auto', onDecided, widenTo) : new ThreadChoice(value, onDecided);
  }

  /** Where the model's own sessions (one per instance, or one shared) open: inline only when fixed so. */
  get thread(): SessionThread {
    return this.requested === 'inline' ? 'inline' : 'worker';
  }

  /** The intra-op threads the choice gives the model's pooled sessions, once it widened them and while their runs do not overlap. */
  get intraOpThreads(): number | undefined {
    return this.overlap.narrow ? undefined : this.wideThreads;
  }

  /**
   * Records whether a pooled run of a widened model was `alone` (it served every request
   * the model had in flight); the model's sessions go narrow while most runs overlap,
   * and wide again once most do not (overlapping-runs.ts).
   */
  recordPoolRun(alone: boolean): void {
    if (this.wideThreads !== undefined && this.overlap.record(alone)) this.decided();
  }

  /** The intra-op threads the inline session needs: the wider ones once a size measured on them runs (or is timed) inline. */
  get inlineIntraOpThreads(): number | undefined {
    return this.inlineWide ? this.wideThreads : undefined;
  }

  /** Whether some size runs inline: the model's shared inline session is wanted. */
  get wantsInline(): boolean {
    if (this.inlineRefused !== undefined) return false;
    for (const band of this.bands.values()) if (band.inline || band.timed) return true;
    return false;
  }

  /**
   * Whether a run with this many bytes of input goes to the inline session: its size runs
   * there, or is timed there. A size a trial sent inline whose runs there hold the loop
   * for INLINE_MAX_MICROSECONDS or more goes there only when `alone`, the run serving
   * every request the model has in flight: overlapping requests would queue on the loop,
   * holding it for each, where the pool runs them side by side. (A trial's own runs all go
   * inline, so that it decides whatever the load.)
   */
  runsInline(inputBytes: number, alone = true): boolean {
    const band = this.bands.get(bandOf(inputBytes));
    if (!band || this.inlineRefused !== undefined) return false;
    if (band.timed === undefined) return band.inline === true;
    return alone || !(band.inline && band.timed.holdsLoop);
  }

  /** Whether runs of this size are timed inline: recordInline() wants their times. */
  timesInline(inputBytes: number): boolean {
    return this.bands.get(bandOf(inputBytes))?.timed !== undefined;
  }

  /** Whether runs of this size are measured: every size not inline, under "auto". */
  measures(inputBytes: number): boolean {
    return this.requested === 'auto' && this.bands.get(bandOf(inputBytes))?.inline !== true;
  }

  /** Records one measured worker run (after its session's warm-up); decides its size's place once enough are in. */
  record(sample: RunSample): void {
    if (this.requested !== 'auto') return;
    const key = bandOf(sample.inputBytes);
    let band = this.bands.get(key);
    if (!band) this.bands.set(key, (band = { runs: [], handoffs: [] }));
    // A trial's size still runs on the pool until the inline session opens: those runs tell nothing new.
    if (band.inline || band.timed) return;
    band.runs.push(sample.runMicroseconds);
    band.handoffs.push(sample.handoffMicroseconds);
    if (band.runs.length < MEASURED_RUNS) return;
    const run = quantile(band.runs, 0.25);
    const handoff = quantile(band.handoffs, 0.5);
    // The next window starts afresh.
    band.runs.length = 0;
    band.handoffs.length = 0;
    const measured = `${sizeName(key)} of input: run ${run.toFixed(0)} µs in onnxruntime (lower quartile), handoff to a worker ${handoff.toFixed(0)} µs (median)`;
    if (band.pool) {
      // On the pool already: it moves only when windows in a row say it fits the loop.
      band.pool.fittingWindows = this.fitsInline(run, handoff) ? band.pool.fittingWindows + 1 : 0;
      if (band.pool.fittingWindows >= FITTING_WINDOWS_TO_MOVE) this.goInline(band, measured);
      else if (!this.fitsInline(run, handoff) && --band.pool.windowsToTrial <= 0 && this.mayTry(run)) this.startTrial(band, run + handoff, measured);
      return;
    }
    if (this.wideThreads === undefined && this.widenTo !== undefined && run >= WIDE_FROM_MICROSECONDS) {
      // Every size on the pool is measured again on the wider sessions; those inline stay so.
      this.wideThreads = this.widenTo;
      for (const [other, { inline }] of this.bands) if (!inline) this.bands.delete(other);
      this.widenWhy = `runs long enough to split (${measured})`;
    } else if (this.fitsInline(run, handoff)) {
      return this.goInline(band, measured);
    } else if (this.mayTry(run)) {
      return this.startTrial(band, run + handoff, measured);
    } else {
      const why = this.wideThreads === undefined && run >= handoff ? `a run costs more than the handoff (${measured})` : `runs too long to hold the event loop (${measured})`;
      this.sendToPool(band, why, 0);
    }
    this.decided();
  }

  /**
   * Records one run of a size timed inline (its time on the loop, undefined where the
   * inline session cannot time it); decides the size once a window is in.
   */
  recordInline(inputBytes: number, runMicroseconds: number | undefined): void {
    const band = this.bands.get(bandOf(inputBytes));
    const timed = band?.timed;
    if (!band || !timed) return;
    // The inline session's first runs pay for warming up, as a pooled session's do.
    if (timed.warmUps++ < WARMUP_RUNS) return;
    if (runMicroseconds === undefined) {
      this.inlineUntimed = true;
      return this.endTiming(band, `its inline session does not time its runs (${timed.measured})`);
    }
    timed.runs.push(runMicroseconds);
    if (timed.runs.length < MEASURED_RUNS) return;
    const run = quantile(timed.runs, 0.25);
    timed.runs.length = 0;
    const measured = `${timed.measured}; timed inline: run ${run.toFixed(0)} µs (lower quartile)`;
    timed.holdsLoop = run >= INLINE_MAX_MICROSECONDS;
    const tooLong = `runs too long to hold the event loop (${measured})`;
    if (band.inline) {
      // Inline by a trial: back to the pool only when windows in a row say it no longer fits.
      timed.longWindows = run > LOOP_HOLD_MAX_MICROSECONDS ? timed.longWindows + 1 : 0;
      if (timed.longWindows >= FITTING_WINDOWS_TO_MOVE) this.endTiming(band, tooLong);
      return;
    }
    if (run > LOOP_HOLD_MAX_MICROSECONDS) return this.endTiming(band, tooLong);
    if (run >= timed.poolRoundTrip) return this.endTiming(band, `the pool's round trip is shorter than a run inline (${measured}, round trip ${timed.poolRoundTrip.toFixed(0)} µs)`);
    const why = timed.holdsLoop
      ? 'a lone run timed inline fits the event loop and is shorter than the round trip to a worker; while other requests wait or run, runs go to worker threads'
      : 'a run timed inline fits the event loop and is shorter than the round trip to a worker';
    this.goInline(band, measured, why);
  }

  /**
   * Whether a size too long for the loop as measured on the pool is timed inline: when it
   * may fit there, and on widened sessions only (on one intra-op thread the pool's threads
   * are what run several at once, and a long run inline would take that away).
   */
  private mayTry(run: number): boolean {
    return this.wideThreads !== undefined && this.inlineRefused === undefined && !this.inlineUntimed && run < 2 * LOOP_HOLD_MAX_MICROSECONDS;
  }

  private startTrial(band: SizeBand, poolRoundTrip: number, measured: string): void {
    band.pool = undefined;
    this.inlineWide = true;
    band.timed = { runs: [], warmUps: 0, poolRoundTrip, measured, longWindows: 0, holdsLoop: false };
    this.decided();
  }

  /** Timing inline that found the size does not fit: back to the pool, measured there as before and timed inline again later. */
  private endTiming(band: SizeBand, why: string): void {
    band.misfits = (band.misfits ?? 0) + 1;
    this.sendToPool(band, why, WINDOWS_BETWEEN_TRIALS * 2 ** Math.min(band.misfits - 1, MAX_TRIAL_BACKOFF));
    this.decided();
  }

  private sendToPool(band: SizeBand, why: string, windowsToTrial: number): void {
    band.timed = undefined;
    band.inline = false;
    band.pool = { why, order: ++this.poolDecisions, fittingWindows: 0, windowsToTrial };
  }

  /** Inline: a run short enough for the loop and, on one intra-op thread, cheaper than the handoff. */
  private fitsInline(run: number, handoff: number): boolean {
    return run < INLINE_MAX_MICROSECONDS && (this.wideThreads !== undefined || run < handoff);
  }

  private goInline(band: SizeBand, measured: string, why?: string): void {
    band.inline = true;
    band.pool = undefined;
    if (this.wideThreads !== undefined) this.inlineWide = true;
    this.inlineWhy = `${why ?? (this.wideThreads === undefined ? 'a run costs less than the handoff to a worker' : 'a run is short enough for the event loop')} (${measured})`;
    this.decided();
  }

  /** The model's inline session could not be opened: every size stays on the pool. */
  refuseInline(why: string): void {
    this.inlineRefused = why;
    for (const band of this.bands.values()) if (band.timed) this.sendToPool(band, `runs too long to hold the event loop (${band.timed.measured})`, WINDOWS_BETWEEN_TRIALS);
    this.decided();
  }

  private decided(): void {
    const sizesWhere = (wanted: (band: SizeBand) => unknown) =>
      [...this.bands]
        .filter(([, band]) => wanted(band))
        .map(([key]) => key)
        .sort((a, b) => a - b);
    const inline = sizesWhere((band) => band.inline);
    const timing = sizesWhere((band) => band.timed && !band.inline);
    const parts: string[] = [];
    if (this.inlineRefused !== undefined) parts.push(`never inline: ${this.inlineRefused}`);
    else if (inline.length > 0) parts.push(`inline for ${inline.map(sizeName).join(', ')} of input: ${this.inlineWhy}`);
    if (timing.length > 0 && this.inlineRefused === undefined) parts.push(`timing ${timing.map(sizeName).join(', ')} of input inline before deciding`);
    const workers =
      this.wideThreads === undefined
        ? 'worker threads'
        : this.overlap.narrow
          ? `worker threads with the pool's intra-op threads per session while runs overlap (${this.wideThreads} when they do not)`
          : `worker threads with ${this.wideThreads} intra-op threads per session`;
    // Why the latest size still on the pool went there; else why the model was widened.
    let latest: SizeBand['pool'];
    for (const { pool } of this.bands.values()) if (pool && (!latest || pool.order > latest.order)) latest = pool;
    const why = latest?.why ?? this.widenWhy;
    const others = inline.length + timing.length > 0 && this.inlineRefused === undefined;
    parts.push(`${workers} for ${others ? 'other sizes' : 'every size'}${why ? `: ${why}` : ''}`);
    this.reason = `auto, ${parts.join('; ')}`;
    this.onDecided(this.reason);
  }
}

/** The power-of-two band of a size: 2^n to 2^(n+1) - 1 bytes are band n. */
function bandOf(bytes: number): number {
  return 31 - Math.clz32(Math.max(1, bytes));
}

/** "1–2 KiB": the sizes of a band, from 2^n up to (not including) 2^(n+1) bytes. */
function sizeName(band: number): string {
  return `${bytesName(2 ** band)}–${bytesName(2 ** (band + 1))}`;
}

function bytesName(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let unit = 0;
  while (bytes >= 1024 && unit < units.length - 1) {
    bytes /= 1024;
    unit++;
  }
  return `${bytes} ${units[unit]}`;
}

function quantile(values: number[], q: number): number {
  return values.sort((a, b) => a - b)[Math.floor(values.length * q)]!;
}
