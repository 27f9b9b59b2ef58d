import {
  InferenceError,
  batchInputTensors,
  controlInputNames,
  dataTypeFromConfig,
  elementCount,
  gatherBatchInput,
  mapVariableDims,
  scatterBatchOutputs,
  scatterWithInputShape,
  shapeMatches,
  shapeToString,
} from '@tritium/core/backend';
import type { BackendInstance, BackendRequest, DataType, ExecuteResult, ExecutionReport, Tensor, TensorData } from '@tritium/core/backend';
import type { NormalizedModelConfig, NormalizedModelInput } from '@tritium/core/backend';
import type { RunOutcome, RunResult, SessionThread, TensorPayload } from './onnx-session.js';
import type { OrtRuntime } from './runtime.js';
import type { SessionSlot } from './session-slot.js';
import { decodeStrings, fromOrtTensor, toPayload } from './tensors.js';

/** What a model's instances share: its config, its runtime, and what was learnt from the model at load. */
export interface LoadedModel {
  readonly name: string;
  readonly config: NormalizedModelConfig;
  readonly runtime: OrtRuntime;
  /** Outputs that are scalars (rank 0) in the model: answered in the config's dims, as Triton does. */
  readonly scalarOutputs: ReadonlySet<string>;
}

/** The decoded strings of each BYTES input tensor of a batch's requests. */
type DecodedStrings = Map<Tensor, string[]>;

/** One execution as OnnxInstance.plan() worked it out: what its runs need, and where their results go. */
interface ExecutionPlan {
  readonly requests: readonly BackendRequest[];
  readonly results: Array<Record<string, Tensor> | Error>;
  /** Set for a model with string inputs. */
  readonly strings: DecodedStrings | undefined;
  /** Indices of requests that run as one batch, group by group. */
  readonly groups: (readonly number[])[];
  /** The model's requests the execution serves, which the slot compares with those in flight. */
  readonly served: number;
}

/** What an output (or a sequence state's output) needs per run, worked out once. */
interface OutputPlan {
  readonly dims: readonly number[];
  /** The shape the model gives it, when the config's `reshape` differs from `dims`. */
  readonly reshape?: readonly number[];
  readonly datatype: DataType;
  /** A `batch_output` target: scattered back by its source input's shapes, not by batch size. */
  readonly scatteredByInputShape: boolean;
  /** `model 'm' output 'y'`, for messages. */
  readonly label: string;
}

/**
 * One model instance: runs batches of requests on an onnxruntime session (its own,
 * or one it shares with the model's other instances), on a thread of the execution pool or inline. Requests whose inputs can be
 * stacked are gathered into one run and the outputs scattered back; requests with
 * other shapes run in a group of their own. Ragged inputs (`allow_ragged_batch`) are
 * joined end to end whatever their shapes, with the config's batch inputs made for
 * each run; sequence states arrive and leave as ordinary inputs and outputs.
 */
export class OnnxInstance implements BackendInstance {
  private readonly batching: boolean;
  /** Set for a sequence batching model, whose direct batches may hold empty slots (requests with no sequence). */
  private readonly sequenceBatched: boolean;
  private readonly inputs: readonly NormalizedModelInput[];
  /** Inputs the sequence batcher adds to each request: controls (START, ...) and states. */
  private readonly sequenceInputs: readonly string[];
  private readonly ragged: ReadonlySet<string>;
  private readonly outputs: ReadonlyMap<string, OutputPlan>;
  private readonly allOutputs: readonly string[];
  /** BYTES inputs, decoded per request before a run so that a bad string fails its own request alone. */
  private readonly stringInputs: readonly string[];
  /** `model 'm' input 'x'` per input (and control), for messages, built once. */
  private readonly inputLabels: ReadonlyMap<string, string>;

  constructor(
    private readonly model: LoadedModel,
    private readonly slot: SessionSlot,
    /** Whether this instance owns the session (and releases it), or shares the model's. */
    private readonly ownsSession: boolean,
  ) {
    const { config } = model;
    const states = config.sequence_batching?.state ?? [];
    this.batching = config.max_batch_size > 0;
    this.sequenceBatched = config.sequence_batching !== undefined;
    this.inputs = config.input;
    this.sequenceInputs = [...controlInputNames(config), ...states.map((s) => s.input_name)];
    this.ragged = new Set(this.inputs.filter((i) => i.allow_ragged_batch).map((i) => i.name));
    const scattered = new Set(config.batch_output.flatMap((b) => b.target_name));
    const plan = (name: string, dataType: string, dims: readonly number[], reshape?: readonly number[]): [string, OutputPlan] => [
      name,
      { dims, reshape, datatype: dataTypeFromConfig(dataType), scatteredByInputShape: scattered.has(name), label: `model '${model.name}' output '${name}'` },
    ];
    // A state output the config also lists as an output is answered to the caller too; the config's entry describes it.
    this.outputs = new Map([
      ...states.map((s) => plan(s.output_name, s.data_type, s.dims)),
      ...config.output.map((o) => plan(o.name, o.data_type, o.dims, o.reshape?.shape)),
    ]);
    this.allOutputs = config.output.map((o) => o.name);
    this.stringInputs = this.inputs.filter((i) => i.data_type === 'TYPE_STRING').map((i) => i.name);
    const fed = [...this.sequenceInputs, ...this.inputs.map((i) => i.name), ...config.batch_input.flatMap((b) => b.target_name)];
    this.inputLabels = new Map(fed.map((name) => [name, `model '${model.name}' input '${name}'`]));
  }

  /** Where this instance's last run happened. */
  get thread(): SessionThread {
    return this.slot.lastThread;
  }

  /**
   * Runs the requests, in one batch where they can share it. An execution whose one run
   * went inline has ended when this returns, and returns its results as they are.
   */
  execute(requests: readonly BackendRequest[], report?: ExecutionReport): ExecuteResult | Promise<ExecuteResult> {
    const plan = this.plan(requests);
    // One group, the common case: its run's outcome is the execution's.
    return plan.groups.length === 1 ? this.runGroup(plan, 0, report) : this.runGroups(plan, report);
  }

  private async runGroups(plan: ExecutionPlan, report: ExecutionReport | undefined): Promise<ExecuteResult> {
    for (let g = 0; g < plan.groups.length; g++) await this.runGroup(plan, g, report);
    return plan.results;
  }

  /**
   * What an execution runs: requests cancelled or with strings that cannot be decoded
   * get their errors now, and the others are split into groups that run as one batch
   * each. Worked out before the first await: what an async function holds across an
   * await is saved with it, so awaitGroup() holds little more than this.
   */
  private plan(requests: readonly BackendRequest[]): ExecutionPlan {
    const results: Array<Record<string, Tensor> | Error> = new Array(requests.length);
    // Made only for a model with string inputs: a Map per execution is 200 bytes.
    const strings: DecodedStrings | undefined = this.stringInputs.length > 0 ? new Map() : undefined;
    const live: number[] = [];
    // The model's requests the execution serves: "auto" compares them with those in flight.
    let served = 0;
    for (let i = 0; i < requests.length; i++) {
      const request = requests[i]!;
      if (request.isCancelled) {
        results[i] = new InferenceError('CANCELLED', `${this.describe(request)}: cancelled before it ran`);
        continue;
      }
      try {
        for (const name of this.stringInputs) {
          const tensor = request.inputs[name];
          if (tensor) strings!.set(tensor, decodeStrings(tensor.data as TensorData<'BYTES'>, `${this.describe(request)} input '${name}'`));
        }
        live.push(i);
        if (!this.sequenceBatched || request.sequence !== undefined) served++;
      } catch (error) {
        results[i] = InferenceError.from(error, 'INVALID_ARG', this.describe(request));
      }
    }
    return { requests, results, strings, groups: this.groups(requests, live), served };
  }

  /** Runs group `g` of the plan; returns the plan's results once its requests' outputs, or errors, are in, or their promise while its run is under way. */
  private runGroup(plan: ExecutionPlan, g: number, report: ExecutionReport | undefined): ExecuteResult | Promise<ExecuteResult> {
    const group = plan.groups[g]!;
    const batch = group.length === plan.requests.length ? plan.requests : group.map((i) => plan.requests[i]!);
    let outcome: RunOutcome;
    try {
      const run = this.prepare(batch, plan.strings, report, g === 0);
      if (!run) return this.answer(plan, g, batch.map(() => ({})));
      outcome = this.slot.run(run.feeds, run.fetches, plan.served);
    } catch (error) {
      return this.fail(plan, g, error);
    }
    return outcome instanceof Promise ? this.awaitGroup(plan, g, batch, outcome, report) : this.finishGroup(plan, g, batch, outcome, report);
  }

  private async awaitGroup(plan: ExecutionPlan, g: number, batch: readonly BackendRequest[], pending: Promise<RunResult>, report: ExecutionReport | undefined): Promise<ExecuteResult> {
    let run: RunResult;
    try {
      run = await pending;
    } catch (error) {
      return this.fail(plan, g, error);
    }
    return this.finishGroup(plan, g, batch, run, report);
  }

  /** Group `g`'s run ended: its requests' outputs (or the error making them) go into the plan's results. */
  private finishGroup(plan: ExecutionPlan, g: number, batch: readonly BackendRequest[], run: RunResult, report: ExecutionReport | undefined): ExecuteResult {
    try {
      return this.answer(plan, g, this.outputsOf(batch, run, report, g === 0));
    } catch (error) {
      return this.fail(plan, g, error);
    }
  }

  private answer(plan: ExecutionPlan, g: number, outputs: ReadonlyArray<Record<string, Tensor>>): ExecuteResult {
    const group = plan.groups[g]!;
    for (let k = 0; k < group.length; k++) plan.results[group[k]!] = outputs[k]!;
    return plan.results;
  }

  private fail(plan: ExecutionPlan, g: number, error: unknown): ExecuteResult {
    for (const index of plan.groups[g]!) plan.results[index] = InferenceError.from(error, 'INTERNAL', this.describe(plan.requests[index]!));
    return plan.results;
  }

  async finalize(): Promise<void> {
    if (this.ownsSession) await this.slot.release();
  }

  private describe(request: BackendRequest): string {
    return `model '${this.model.name}' request '${request.id}'`;
  }

  /** Splits request indices into groups that can run as one batch: same item shapes (but for ragged inputs) and datatypes. */
  private groups(requests: readonly BackendRequest[], indices: readonly number[]): (readonly number[])[] {
    // One request (the common case) needs no grouping.
    if (indices.length === 1) return [indices];
    if (!this.batching) return indices.map((i) => [i]);
    // A batcher's batch is compatible already (core's batch key): checked against its first request, not keyed one by one.
    const first = requests[indices[0]!]!;
    if (indices.every((i) => this.fitsWith(requests[i]!, first))) return [indices];
    const groups: number[][] = [];
    for (const i of indices) {
      const group = groups.find((g) => this.fitsWith(requests[i]!, requests[g[0]!]!));
      if (group) group.push(i);
      else groups.push([i]);
    }
    return groups;
  }

  /** Whether two requests can share a run: the same inputs, datatypes and item shapes (any for ragged inputs). */
  private fitsWith(request: BackendRequest, other: BackendRequest): boolean {
    let count = 0;
    for (const name in request.inputs) {
      const a = request.inputs[name]!;
      const b = other.inputs[name];
      if (!b || a.datatype !== b.datatype) return false;
      if (!this.ragged.has(name) && (a.shape.length !== b.shape.length || a.shape.some((dim, d) => d > 0 && dim !== b.shape[d]))) return false;
      count++;
    }
    return count === Object.keys(other.inputs).length;
  }

  /**
   * The feeds and fetches of one compatible batch's run; undefined when the model has
   * no output to fetch (onnxruntime refuses an empty fetch list: nothing to run for).
   * Inputs arrive in the config's `reshape` shape already (the server applies it at the
   * door). `report` hears when the execution's first run began: when its inputs were
   * ready (a pool thread's run tells its own start, which replaces this).
   */
  private prepare(batch: readonly BackendRequest[], strings: DecodedStrings | undefined, report: ExecutionReport | undefined, firstRun: boolean): { feeds: Record<string, TensorPayload>; fetches: readonly string[] } | undefined {
    const first = batch[0]!;
    const feeds: Record<string, TensorPayload> = {};
    for (const name of this.sequenceInputs) {
      if (!(name in first.inputs)) {
        throw new InferenceError('INVALID_ARG', `${this.describe(first)}: no sequence input '${name}' (the sequence batcher provides it)`);
      }
      feeds[name] = this.feed(batch, name, strings);
    }
    for (const input of this.inputs) {
      if (!(input.name in first.inputs)) {
        if (input.optional) continue;
        throw new InferenceError('INVALID_ARG', `${this.describe(first)}: no input '${input.name}'`);
      }
      feeds[input.name] = this.feed(batch, input.name, strings);
    }
    if (this.model.config.batch_input.length > 0) {
      const batchInputs = batchInputTensors(this.model.config, batch);
      for (const name in batchInputs) feeds[name] = toPayload(batchInputs[name]!, this.inputLabels.get(name)!);
    }
    const fetches = this.fetches(batch);
    if (fetches.length === 0) return undefined;
    if (firstRun) report?.inputsReady();
    return { feeds, fetches };
  }

  /**
   * Each request's outputs of a run, given the config's `dims` (the server keeps only
   * the outputs each request asked for). `report` hears when the run ended (its
   * outputs coming back), and for the execution's first run when a pool thread began
   * it, as Triton's onnxruntime backend reports its compute start and end.
   */
  private outputsOf(batch: readonly BackendRequest[], run: RunResult, report: ExecutionReport | undefined, firstRun: boolean): Array<Record<string, Tensor>> {
    const { outputs: results, ranFrom, ranTo } = run;
    // A pool thread's own run times; inline, the run is the call.
    if (firstRun && ranFrom !== undefined) report?.inputsReady(ranFrom);
    report?.outputsStarted(ranTo);
    let batchSize = 0;
    for (const request of batch) batchSize += request.batchSize;
    const byBatchSize: Record<string, Tensor> = {};
    const byInputShape: Record<string, Tensor> = {};
    for (const name in results) {
      const target = this.outputs.get(name)!.scatteredByInputShape ? byInputShape : byBatchSize;
      target[name] = this.output(name, results[name]!, batchSize);
    }
    const perRequest = batch.length === 1 ? [byBatchSize] : scatterBatchOutputs(batch, byBatchSize);
    for (const name in byInputShape) {
      scatterWithInputShape(this.model.config, batch, name, byInputShape[name]!).forEach((tensor, i) => (perRequest[i]![name] = tensor));
    }
    return perRequest;
  }

  /**
   * One input of a batch, stacked along the batch dimension, for the session. Core
   * gathers into buffers it reuses batch after batch, so they are copied to a pool
   * thread, never transferred (which would detach them).
   */
  private feed(batch: readonly BackendRequest[], name: string, strings: DecodedStrings | undefined): TensorPayload {
    const tensor = gatherBatchInput(batch, name, { ragged: this.ragged.has(name) });
    const decoded = tensor.datatype === 'BYTES' ? batch.flatMap((request) => strings!.get(request.inputs[name]!)!) : undefined;
    return toPayload(tensor, this.inputLabels.get(name)!, decoded);
  }

  /** The outputs a batch asked for; the config's outputs when it named none (as Triton, and never an empty list for onnxruntime). */
  private fetches(batch: readonly BackendRequest[]): readonly string[] {
    if (batch.length === 1) return batch[0]!.requestedOutputs.length > 0 ? batch[0]!.requestedOutputs : this.allOutputs;
    const wanted = new Set<string>();
    for (const request of batch) for (const name of request.requestedOutputs) wanted.add(name);
    return wanted.size > 0 ? [...wanted] : this.allOutputs;
  }

  /**
   * One output of a run in the config's shape, its first dimension checked against the
   * batch size; a batch output as the model gave it, for scatterWithInputShape.
   */
  private output(name: string, value: TensorPayload, batchSize: number): Tensor {
    const { dims, reshape, datatype, scatteredByInputShape, label: what } = this.outputs.get(name)!;
    const tensor = fromOrtTensor(value, datatype, what);
    if (scatteredByInputShape) return tensor;
    if (this.model.scalarOutputs.has(name)) {
      // A scalar in the model is answered in the config's dims, as Triton does.
      tensor.shape = [...(this.batching ? [batchSize] : []), ...dims];
      if (elementCount(tensor.shape) !== tensor.data.length) {
        throw new InferenceError('INTERNAL', `${what}: the model returned a scalar, which cannot fill the configuration's shape ${shapeToString(tensor.shape)}`);
      }
      return tensor;
    }
    if (this.batching && tensor.shape[0] !== batchSize) {
      throw new InferenceError(
        'INTERNAL',
        `${what}: the model returned shape ${shapeToString(tensor.shape)}, whose first dimension should be the batch size ${batchSize}`,
      );
    }
    if (reshape) tensor.shape = this.inConfigDims(tensor.shape, reshape, dims, what);
    return tensor;
  }

  /** An output the model gives in its `reshape` form, read in the config's `dims` form; the batch dimension stays. */
  private inConfigDims(shape: readonly number[], reshape: readonly number[], dims: readonly number[], what: string): number[] {
    const lead = this.batching ? 1 : 0;
    const items = shape.slice(lead);
    if (!shapeMatches(items, reshape)) {
      throw new InferenceError('INTERNAL', `${what}: the model returned shape ${shapeToString(shape)}, which does not fit the configuration's reshape ${shapeToString(reshape)}`);
    }
    return [...shape.slice(0, lead), ...mapVariableDims(items, reshape, dims)];
  }
}
