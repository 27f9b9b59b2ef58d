import { SequenceBatcher, type SequenceBatch, type SequenceBatcherOptions, type SequenceItem } from '@tritium/batcher';
import type { NormalizedModelConfig } from '../config/schema.js';
import type { SequenceOptions } from '../contract/inference.js';
import { InferenceError } from '../errors.js';
import { describeValue } from '../tensor/convert.js';
import { emitTritiumWarning } from '../warnings.js';
import type { InferenceRequest } from './inference-request.js';
import { noInstanceCanRun, type InstancePool } from './instance-pool.js';
import type { Scheduler } from './scheduler.js';
import { SequenceControls } from './sequence-controls.js';
import type { SequenceStates } from './sequence-states.js';
import { SequenceStep } from './sequence-step.js';
import { WakeTimer } from './wake-timer.js';

interface SequenceEntry extends SequenceItem {
  readonly request: InferenceRequest;
}

/**
 * Triton's sequence batcher: the slots, backlog, idle release and batch forming are
 * @tritium/batcher's SequenceBatcher (direct or oldest); this adapts it to requests and
 * instances. A sequence's slot belongs to one instance, and its steps run one at a
 * time, in order, each with its control inputs and its implicit state.
 */
export class SequenceBatchScheduler implements Scheduler {
  private readonly batcher: SequenceBatcher<SequenceEntry>;
  private readonly controls: SequenceControls;
  private readonly timer = new WakeTimer(() => this.dispatch());
  /** Batches formed for instances that wait for the rate limiter's grant, by instance. */
  private readonly held = new Map<number, SequenceBatch<SequenceEntry>>();
  private onDrained: (() => void) | undefined;

  constructor(
    private readonly config: NormalizedModelConfig,
    private readonly pool: InstancePool,
    private readonly states: SequenceStates | undefined,
  ) {
    this.batcher = new SequenceBatcher(sequenceBatcherOptions(config, pool.size));
    this.controls = new SequenceControls(config);
    pool.listen(() => this.dispatch());
  }

  enqueue(request: InferenceRequest): void {
    // The door made sure a sequence model's requests name their sequence.
    const sequence = request.sequence!;
    const entry: SequenceEntry = { sequenceKey: sequenceKey(sequence.id), start: sequence.start ?? false, end: sequence.end ?? false, request };
    const result = this.batcher.enqueue(entry);
    if (!result.accepted) {
      request.reject(this.refusal(request, sequence, result.reason));
      return;
    }
    if (result.restarted) {
      emitTritiumWarning(
        'TRITIUM_W009',
        `model '${this.config.name}': sequence ${describeValue(sequence.id)} started again before it ended; the earlier sequence ends early, as in Triton`,
      );
    }
    request.withdraw = () => this.batcher.remove(entry);
    this.dispatch();
  }

  /** Whether a request of this sequence is still taken while the model drains: one that continues a live sequence. */
  continues(sequence: SequenceOptions): boolean {
    return !sequence.start && this.batcher.isLive(sequenceKey(sequence.id));
  }

  /** New sequences are refused from now on; resolves when every live sequence has ended or idled out. */
  drain(): Promise<void> {
    this.batcher.drain();
    const drained = new Promise<void>((resolve) => {
      this.onDrained = resolve;
    });
    this.dispatch();
    return drained;
  }

  stop(error: InferenceError): void {
    this.timer.clear();
    this.failQueued(() => error);
    this.onDrained?.();
  }

  private dispatch(): void {
    const failure = this.pool.failure;
    if (failure !== undefined) {
      this.failQueued((request) => noInstanceCanRun(request, failure));
    }
    for (const key of this.batcher.takeReleased()) this.states?.forget(key);
    let wakeAt: number | undefined;
    for (let instance = 0; instance < this.pool.size; instance++) {
      if (!this.pool.isIdle(instance)) continue;
      const held = this.held.get(instance);
      const next = held ? { batch: held, wakeAt: undefined } : this.batcher.nextBatch(instance);
      if (next.batch) this.run(next.batch);
      else wakeAt = earliest(wakeAt, next.wakeAt);
    }
    // Free instances' delays and idle releases are all there is to wake for (a busy or recovering
    // instance dispatches when it is back). Only queued requests keep the process alive.
    this.timer.set(earliest(wakeAt, this.batcher.releaseAt()), this.batcher.size > 0);
    if (this.onDrained && this.batcher.liveSequences === 0) this.onDrained();
  }

  private run(batch: SequenceBatch<SequenceEntry>): void {
    const runner = this.pool.acquireAt(batch.instance);
    if (!runner) {
      // The rate limiter has not granted the instance its resources yet: the batch waits, formed, as Triton's payload does.
      this.held.set(batch.instance, batch);
      return;
    }
    this.held.delete(batch.instance);
    const steps: SequenceStep[] = new Array(batch.items.length);
    let template: SequenceStep | undefined;
    batch.items.forEach((entry, slot) => {
      if (!entry) return;
      entry.request.withdraw = undefined;
      steps[slot] = template = SequenceStep.of(entry.request, entry.sequenceKey, this.controls, this.states);
    });
    for (let slot = 0; slot < steps.length; slot++) steps[slot] ??= SequenceStep.emptySlot(template!, this.controls, this.states);
    runner.run(steps, () => {
      for (const entry of batch.items) if (entry?.end) this.states?.forget(entry.sequenceKey);
      this.batcher.completed(batch);
      // An instance back in service dispatches through the pool; otherwise dispatch here, for the idle timers and draining.
      if (!this.pool.release(runner)) this.dispatch();
    });
  }

  private refusal(request: InferenceRequest, sequence: SequenceOptions, reason: 'not-started' | 'draining'): InferenceError {
    const id = describeValue(sequence.id);
    if (reason === 'draining') {
      return new InferenceError('UNAVAILABLE', `${request.describe()}: the model is unloading: it takes no new sequence (correlation id ${id}), only requests of sequences in flight`);
    }
    return new InferenceError(
      'INVALID_ARG',
      `${request.describe()}: sequence with correlation id ${id} is not started (never started, ended, or released after ${this.config.sequence_batching!.max_sequence_idle_microseconds} µs idle): its first request must set sequence.start`,
    );
  }

  private failQueued(errorFor: (request: InferenceRequest) => InferenceError): void {
    const held = [...this.held.values()].flatMap((batch) => batch.items.flatMap((entry) => (entry ? [entry] : [])));
    this.held.clear();
    for (const { request } of [...held, ...this.batcher.clear()]) {
      request.withdraw = undefined;
      request.cancel(errorFor(request));
    }
  }
}

function earliest(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined || (b !== undefined && b < a) ? b : a;
}

/** Numeric and string correlation ids never collide; 5 and 5n are one sequence. */
function sequenceKey(id: SequenceOptions['id']): string {
  return typeof id === 'string' ? `s${id}` : `n${id}`;
}

function sequenceBatcherOptions(config: NormalizedModelConfig, instances: number): SequenceBatcherOptions {
  const batching = config.sequence_batching!;
  const maxBatchSize = Math.max(1, config.max_batch_size);
  const oldest = batching.oldest;
  return {
    strategy: oldest ? 'oldest' : 'direct',
    instances,
    // An oldest batcher without max_candidate_sequences considers as many sequences as fit in a batch.
    slotsPerInstance: oldest ? oldest.max_candidate_sequences || maxBatchSize : maxBatchSize,
    maxBatchSize,
    preferredBatchSizes: oldest?.preferred_batch_size ?? [],
    maxQueueDelayMicroseconds: (oldest ?? batching.direct)?.max_queue_delay_microseconds ?? 0,
    minimumSlotUtilization: batching.direct?.minimum_slot_utilization ?? 0,
    maxSequenceIdleMicroseconds: batching.max_sequence_idle_microseconds,
  };
}
