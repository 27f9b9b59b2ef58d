import {
  InferenceError,
  modelConfigToJson,
  type BackendInstance,
  type BackendRequest,
  type ExecuteResult,
  type ExecutionReport,
  type InstanceContext,
  type ModelContext,
  type Tensor,
} from '@tritium/core/backend';
import type { CustomMetrics } from './custom-metrics.js';
import type { Frame } from './frame-channel.js';
import { fromFrameError } from './frame-error.js';
import { SEQUENCE_END, SEQUENCE_START } from './sequence-flags.js';
import type { PythonEnvironment } from './python-environment.js';
import { StubCalls } from './stub-calls.js';
import { StubProcess, type ArenaSizes } from './stub-process.js';
import { readTensors, writeTensors, type TensorRef } from './tensor-transfer.js';

/** How long a readiness check waits for the model's is_ready(). */
const READY_TIMEOUT_MS = 2_000;

export interface PythonInstanceOptions {
  readonly environment: PythonEnvironment;
  readonly modelFile: string;
  readonly metrics: CustomMetrics;
  readonly startTimeoutMs: number;
  readonly arenaSizes: ArenaSizes;
  /** How long finalize() waits for the model's finalize before killing the stub. */
  readonly finalizeTimeoutMs: number;
}

/** One execute call in flight: its requests, the lease of their inputs, and how it settles. */
interface PendingBatch {
  readonly requests: readonly BackendRequest[];
  readonly rids: readonly number[];
  readonly lease: number | null;
  readonly stopListening: ReadonlyArray<() => void>;
  /** Hears when the stub's answer arrived: the model's execute() returned and its outputs start to be read. */
  readonly report: ExecutionReport | undefined;
  readonly resolve: (result: ExecuteResult | void) => void;
  readonly reject: (error: unknown) => void;
  /** Decoupled: requests whose final response has not come yet, and whether execute returned. */
  open: number;
  executed: boolean;
}

/**
 * A model instance served by a Python stub process (Triton's python backend): starts
 * the stub, initializes the model in it, sends it batches and delivers what comes back.
 * A stub that dies fails its in-flight requests at once; the instance leaves the pool
 * (recovering), starts a new stub and comes back, or reports itself failed.
 */
export class PythonInstance implements BackendInstance {
  private stub: StubProcess | undefined;
  private calls: StubCalls | undefined;
  private readonly batches = new Map<number, PendingBatch>();
  /** Decoupled requests still streaming, by their id in frames. */
  private readonly streams = new Map<number, { request: BackendRequest; batch: number }>();
  /** Answers the instance waits for (init_done, finalized, ready_state), by frame type. */
  private readonly answers = new Map<string, (frame: Frame) => void>();
  private nextBatch = 1;
  private nextRid = 1;
  private nextCall = 1;
  private finalizing = false;
  /** The model's last is_ready() answer. */
  private lastReady = true;
  /** A stub being started (and initialized): finalize ends it rather than wait for an initialize that may hang. */
  private starting: StubProcess | undefined;
  /** A new stub being started after the last one died; finalize waits for it. */
  private restarting: Promise<void> | undefined;
  private readonly label: string;
  private readonly decoupled: boolean;

  private constructor(
    private readonly context: ModelContext,
    private readonly instance: InstanceContext,
    private readonly options: PythonInstanceOptions,
  ) {
    this.label = `model '${context.name}' instance ${instance.name}`;
    this.decoupled = context.config.model_transaction_policy?.decoupled ?? false;
  }

  static async create(context: ModelContext, instance: InstanceContext, options: PythonInstanceOptions): Promise<PythonInstance> {
    const created = new PythonInstance(context, instance, options);
    await created.startStub();
    return created;
  }

  async execute(requests: readonly BackendRequest[], report?: ExecutionReport): Promise<ExecuteResult | void> {
    const stub = this.stub;
    if (!stub || stub.exited) throw new InferenceError('UNAVAILABLE', `${this.label}: the Python stub is not running`);
    const batch = this.nextBatch++;
    const { lease, refs } = writeTensors(stub.arena, requests.map((request) => request.inputs));
    const rids = requests.map(() => this.nextRid++);
    stub.send({ t: 'execute', batch, lease, requests: requests.map((request, i) => describeRequest(request, rids[i]!, refs[i]!)) });
    // The inputs are in shared memory and the stub has the batch: the rest is the model's execute(), until its answer.
    report?.inputsReady();
    return new Promise((resolve, reject) => {
      // Sent after execute, so the stub knows the request a cancellation names.
      const stopListening = requests.map((request, i) => request.onCancel(() => this.stub?.send({ t: 'cancel', rid: rids[i] })));
      this.batches.set(batch, { requests, rids, lease, stopListening, report, resolve, reject, open: this.decoupled ? requests.length : 0, executed: false });
      if (this.decoupled) requests.forEach((request, i) => this.streams.set(rids[i]!, { request, batch }));
      this.updateBusy();
    });
  }

  /**
   * The model's own is_ready() (True when it has none); false while the stub is down.
   * A stub busy executing answers only after the batch, so then, and when no answer comes
   * within READY_TIMEOUT_MS, the last answer stands: a readiness probe never waits on a model.
   */
  async isReady(): Promise<boolean> {
    const stub = this.stub;
    if (!stub || stub.exited) return false;
    if (this.batches.size > 0) return this.lastReady;
    const call = this.nextCall++;
    const key = `ready_state:${call}`;
    const answer = this.awaitAnswer(key);
    stub.send({ t: 'is_ready', call });
    let timer: NodeJS.Timeout | undefined;
    const frame = await Promise.race([answer, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), READY_TIMEOUT_MS)))]);
    clearTimeout(timer);
    if (!frame) {
      this.answers.delete(key);
      this.updateBusy();
      return this.lastReady;
    }
    this.lastReady = frame.error == null && frame.ready === true;
    return this.lastReady;
  }

  /** Calls the model's finalize(), then ends the stub; kills it if it is busy or does not answer in time. */
  async finalize(): Promise<void> {
    this.finalizing = true;
    this.starting?.kill('the instance was finalized while its stub was starting');
    await this.restarting;
    const stub = this.stub;
    if (!stub || stub.exited) return;
    if (this.batches.size === 0) {
      const finalized = this.awaitAnswer('finalized');
      stub.expectExit();
      stub.send({ t: 'finalize' });
      const timer = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), this.options.finalizeTimeoutMs).unref());
      const answer = await Promise.race([finalized, timer, stub.whenExited().then(() => undefined)]);
      if (answer?.error) this.context.logger.error(`${this.label}: finalize failed: ${fromFrameError(answer.error, 'finalize').message}`);
    }
    await stub.stop(this.batches.size === 0 ? this.options.finalizeTimeoutMs : 0);
    this.failInFlight(`${this.label}: the instance was finalized`);
  }

  /**
   * Starts a stub and initializes the model in it. The stub becomes the instance's only
   * once initialized: until then its death is this call's failure, not a crash to restart.
   */
  private async startStub(): Promise<void> {
    const stub = await StubProcess.start(
      { environment: this.options.environment, modelFile: this.options.modelFile, label: this.label, startTimeoutMs: this.options.startTimeoutMs, arenaSizes: this.options.arenaSizes },
      (frame) => this.onFrame(stub, frame),
      (reason) => this.onStubExit(stub, reason),
    );
    this.starting = stub;
    this.calls = new StubCalls(stub, this.context, this.options.metrics, (rid) => this.requestOf(rid));
    try {
      const initialized = this.awaitAnswer('init_done');
      stub.send({ t: 'init', args: this.initializeArgs() });
      const answer = await Promise.race([initialized, stub.whenExited().then((): Frame => ({ t: 'exit' }))]);
      this.answers.delete('init_done');
      if (answer.t === 'exit' || answer.error) {
        const reason = answer.t === 'exit' ? 'the Python stub exited during initialize' : fromFrameError(answer.error, 'initialize').message;
        await stub.stop(0);
        throw new InferenceError('UNAVAILABLE', `${this.label}: ${reason}`);
      }
    } finally {
      this.starting = undefined;
    }
    this.stub = stub;
    this.updateBusy();
  }

  /** Triton's initialize(args): every value a string. */
  private initializeArgs(): Record<string, string> {
    const { context, instance } = this;
    return {
      // The JSON Triton's model-config endpoint returns, as Triton's stub receives it.
      model_config: JSON.stringify(modelConfigToJson(context.config)),
      model_instance_kind: instance.kind.replace(/^KIND_/, ''),
      model_instance_name: instance.name,
      model_instance_device_id: String(instance.deviceId ?? 0),
      model_repository: context.modelDirectory,
      model_version: String(context.version),
      model_name: context.name,
    };
  }

  private awaitAnswer(key: string): Promise<Frame> {
    const answered = new Promise<Frame>((resolve) =>
      this.answers.set(key, (frame) => {
        resolve(frame);
        this.updateBusy();
      }),
    );
    this.updateBusy();
    return answered;
  }

  private onFrame(stub: StubProcess, frame: Frame): void {
    try {
      this.dispatch(stub, frame);
    } catch (error) {
      stub.kill(`its frame '${String(frame.t)}' could not be handled: ${(error as Error).message}`);
    }
  }

  private dispatch(stub: StubProcess, frame: Frame): void {
    switch (frame.t) {
      case 'responses':
        return this.onResponses(stub, frame);
      case 'send':
        return this.onSend(stub, frame);
      case 'executed':
        return this.onExecuted(frame);
      case 'free':
        for (const lease of frame.leases as number[]) stub.arena.release(lease);
        return;
      default: {
        if (this.calls?.handle(frame)) return;
        const key = frame.t === 'ready_state' ? `ready_state:${String(frame.call)}` : frame.t;
        const answer = this.answers.get(key);
        if (!answer) throw new Error('unexpected');
        this.answers.delete(key);
        answer(frame);
      }
    }
  }

  private onResponses(stub: StubProcess, frame: Frame): void {
    const pending = this.takeBatch(frame.batch as number);
    try {
      if (frame.error) {
        pending.reject(fromFrameError(frame.error, this.label));
        return;
      }
      const responses = frame.responses as Array<{ outputs: TensorRef[]; error: unknown }>;
      pending.report?.outputsStarted();
      pending.resolve(
        responses.map((response, i) =>
          // A model's TritonError reaches the client in the model's words, as in Triton.
          response.error ? fromFrameError(response.error) : this.outputs(stub, response.outputs, pending.requests[i]),
        ),
      );
    } catch (error) {
      // The batch has left the books: it must be settled here, then the stub is killed for the bad frame.
      pending.reject(error);
      throw error;
    } finally {
      stub.free(frame.lease as number | null);
    }
  }

  private onSend(stub: StubProcess, frame: Frame): void {
    const stream = this.streams.get(frame.rid as number);
    try {
      if (!stream) return; // its request already failed (the stub is told nothing: Triton drops such responses too)
      const { request } = stream;
      const final = frame.final === true;
      if (frame.error) {
        request.response.fail(fromFrameError(frame.error));
      } else if (frame.outputs) {
        const outputs = this.outputs(stub, frame.outputs as TensorRef[], request);
        if (outputs instanceof Error) request.response.fail(outputs);
        else request.response.send(outputs, { final });
      } else if (final) {
        request.response.close();
      }
      if (final || frame.error) this.endStream(frame.rid as number);
    } finally {
      stub.free(frame.lease as number | null);
    }
  }

  private onExecuted(frame: Frame): void {
    const batch = frame.batch as number;
    const pending = this.batches.get(batch);
    if (!pending) return;
    pending.executed = true;
    if (frame.error) {
      // execute raised: its requests that have not ended fail with it, as Triton ends them.
      const error = fromFrameError(frame.error, this.label);
      for (const rid of pending.rids) {
        this.streams.get(rid)?.request.response.fail(error);
        this.streams.delete(rid);
      }
      pending.open = 0;
      pending.reject(error);
    } else {
      pending.resolve();
    }
    if (pending.open === 0) this.takeBatch(batch);
    this.updateBusy();
  }

  /** The request executing (or, decoupled, still streaming) under `rid`. */
  private requestOf(rid: number): BackendRequest | undefined {
    const streaming = this.streams.get(rid);
    if (streaming) return streaming.request;
    for (const batch of this.batches.values()) {
      const index = batch.rids.indexOf(rid);
      if (index >= 0) return batch.requests[index];
    }
    return undefined;
  }

  private endStream(rid: number): void {
    const stream = this.streams.get(rid);
    if (!stream) return;
    this.streams.delete(rid);
    const pending = this.batches.get(stream.batch);
    if (pending && --pending.open === 0 && pending.executed) this.takeBatch(stream.batch);
  }

  /** Removes a finished batch: stops listening for cancellations and returns its input lease. */
  private takeBatch(batch: number): PendingBatch {
    const pending = this.batches.get(batch);
    if (!pending) throw new Error(`no execute ${batch} is in flight`);
    this.batches.delete(batch);
    for (const stop of pending.stopListening) stop();
    this.stub?.arena.release(pending.lease);
    this.updateBusy();
    return pending;
  }

  private outputs(stub: StubProcess, refs: TensorRef[], request: BackendRequest | undefined): Record<string, Tensor> | InferenceError {
    try {
      return readTensors(stub.peers, refs, this.describe(request));
    } catch (error) {
      return InferenceError.from(error, 'INTERNAL', this.describe(request));
    }
  }

  private describe(request: BackendRequest | undefined): string {
    return `${this.label} request '${request?.id ?? ''}'`;
  }

  /** Node's event loop stays alive while the stub owes an answer: a batch, a stream, or a reply awaited. */
  private updateBusy(): void {
    this.stub?.setBusy(this.batches.size > 0 || this.streams.size > 0 || this.answers.size > 0);
  }

  /** The stub died on its own: fail what it held, leave the pool, and start a new one. */
  private onStubExit(stub: StubProcess, reason: string): void {
    if (stub !== this.stub) return;
    this.failInFlight(`${this.label}: ${reason}`);
    if (this.finalizing) return;
    this.instance.health.recovering(reason);
    this.restarting = this.startStub().then(
      () => {
        if (!this.finalizing) this.instance.health.restored();
      },
      (error: unknown) => {
        if (!this.finalizing) this.instance.health.failed(`restarting the Python stub failed: ${(error as Error).message}`);
      },
    );
    const restart = this.restarting;
    void restart.finally(() => {
      if (this.restarting === restart) this.restarting = undefined;
    });
  }

  private failInFlight(reason: string): void {
    this.calls?.abortAll();
    const error = new InferenceError('UNAVAILABLE', reason);
    for (const { request } of this.streams.values()) request.response.fail(error);
    this.streams.clear();
    for (const pending of this.batches.values()) {
      for (const stop of pending.stopListening) stop();
      if (!pending.executed) pending.reject(error);
    }
    this.batches.clear();
    for (const answer of this.answers.values()) answer({ t: 'exit', error: { code: 'UNAVAILABLE', message: reason } });
    this.answers.clear();
  }
}

/** A request as the execute frame carries it (PROTOCOL.md). */
function describeRequest(request: BackendRequest, rid: number, inputs: TensorRef[]): Record<string, unknown> {
  const sequence = request.sequence;
  const id = sequence?.id ?? 0;
  const bigId = typeof id === 'bigint' && id > BigInt(Number.MAX_SAFE_INTEGER);
  return {
    rid,
    request_id: request.id,
    inputs,
    requested: request.requestedOutputs,
    parameters: request.parameters,
    correlation_id: typeof id === 'bigint' ? Number(id) : id,
    ...(bigId ? { correlation_id_str: id.toString() } : {}),
    flags: (sequence?.start ? SEQUENCE_START : 0) | (sequence?.end ? SEQUENCE_END : 0),
    priority: request.priority,
    timeout: request.timeoutMicroseconds,
  };
}
