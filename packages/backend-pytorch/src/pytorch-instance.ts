import { InferenceError, batchInputTensors, dataTypeFromConfig, gatherBatchInput, mapVariableDims, scatterBatchOutputs, shapeToString, typedArrayConstructor } from '@tritium/core/backend';
import type { BackendInstance, BackendRequest, DataType, ExecuteResult, ExecutionReport, ModelContext, Tensor } from '@tritium/core/backend';
import type { InstanceThread, NativeOutput, NativeTensor } from './native.js';
import type { InputBinding } from './naming.js';

/** Where the config's tensors sit among a module's forward() arguments and results. */
export interface BoundModule {
  /** Every tensor forward() is fed, in binding order: the config's inputs, its batch inputs' targets, the sequence controls. */
  readonly feeds: readonly string[];
  readonly inputs: InputBinding;
  /** Result position of each config output, in config order. */
  readonly outputs: readonly number[];
}

interface OutputPlan {
  readonly name: string;
  /** Said in its errors: the model and the output. */
  readonly what: string;
  readonly datatype: DataType;
  /** The typed array its bytes are read as. */
  readonly Data: new (buffer: ArrayBuffer) => Tensor['data'];
  readonly dims: readonly number[];
  readonly reshape?: readonly number[];
}

/**
 * One instance: stacks a batch's requests along the first dimension, runs forward()
 * once on the instance's own thread (or, inline, on the caller's), and splits the
 * results back per request.
 * Requests whose item shapes differ run as separate batches.
 */
export class PytorchInstance implements BackendInstance {
  private readonly batching: boolean;
  /** The config's inputs, whose item shapes decide which requests stack together. */
  private readonly inputNames: readonly string[];
  private readonly batchInputTargets: ReadonlySet<string>;
  private readonly outputs: readonly OutputPlan[];

  constructor(
    private readonly context: ModelContext,
    private readonly bound: BoundModule,
    private readonly thread: InstanceThread,
    private readonly release: () => void,
    /** Runs forward() on the calling thread (`execution_thread: inline`), not the instance's. */
    private readonly inline: boolean,
  ) {
    const { config } = context;
    this.batching = config.max_batch_size > 0;
    this.inputNames = config.input.map((i) => i.name);
    this.batchInputTargets = new Set(config.batch_input.flatMap((b) => b.target_name));
    this.outputs = config.output.map((o) => {
      const datatype = dataTypeFromConfig(o.data_type);
      const Data = typedArrayConstructor(datatype) as unknown as OutputPlan['Data'];
      return { name: o.name, what: `model '${context.name}' output '${o.name}'`, datatype, Data, dims: o.dims, reshape: o.reshape?.shape };
    });
  }

  async execute(requests: readonly BackendRequest[], report?: ExecutionReport): Promise<ExecuteResult> {
    const results: Array<Record<string, Tensor> | Error> = new Array(requests.length);
    const live: number[] = [];
    requests.forEach((request, i) => {
      if (request.isCancelled) results[i] = new InferenceError('CANCELLED', `${this.describe(request)}: cancelled before it ran`);
      else live.push(i);
    });
    const groups = this.groups(requests, live);
    // forward()'s start and end are the execution's compute phases when it is one run; runs side by side have no one split.
    const phases = groups.length === 1 ? report : undefined;
    await Promise.all(
      groups.map(async (group) => {
        const batch = group.map((i) => requests[i]!);
        try {
          const outputs = await this.run(batch, phases);
          group.forEach((index, k) => (results[index] = outputs[k]!));
        } catch (error) {
          for (const index of group) results[index] = InferenceError.from(error, 'INTERNAL', this.describe(requests[index]!));
        }
      }),
    );
    return results;
  }

  async finalize(): Promise<void> {
    this.release();
    await this.thread.close();
  }

  private describe(request: BackendRequest): string {
    return `model '${this.context.name}' request '${request.id}'`;
  }

  /** Request indices grouped by the item shapes of their inputs: each group stacks into one run. */
  private groups(requests: readonly BackendRequest[], indices: readonly number[]): number[][] {
    if (!this.batching) return indices.map((i) => [i]);
    const byShape = new Map<string, number[]>();
    for (const i of indices) {
      const inputs = requests[i]!.inputs;
      const key = this.inputNames.map((name) => inputs[name]?.shape.slice(1).join(',')).join(';');
      const group = byShape.get(key);
      if (group) group.push(i);
      else byShape.set(key, [i]);
    }
    return [...byShape.values()];
  }

  private async run(batch: readonly BackendRequest[], report: ExecutionReport | undefined): Promise<Array<Record<string, Tensor>>> {
    const made = this.batchInputTargets.size > 0 ? batchInputTensors(this.context.config, batch) : {};
    const { inputs: binding } = this.bound;
    const args: NativeTensor[] = new Array(this.bound.feeds.length);
    this.bound.feeds.forEach((name, k) => {
      const tensor = this.batchInputTargets.has(name) ? made[name]! : gatherBatchInput(batch, name);
      args[binding.dict ? k : binding.positions[k]!] = { name, datatype: tensor.datatype, shape: tensor.shape, data: tensor.data };
    });
    report?.inputsReady();
    const values = await (this.inline ? this.thread.forwardHere(args) : this.thread.forward(args));
    report?.outputsStarted();
    const batchSize = batch.reduce((sum, request) => sum + request.batchSize, 0);
    const outputs: Record<string, Tensor> = {};
    this.outputs.forEach((plan, k) => (outputs[plan.name] = this.output(plan, values, this.bound.outputs[k]!, batchSize)));
    return batch.length === 1 ? [outputs] : scatterBatchOutputs(batch, outputs);
  }

  /** One config output from forward()'s results, checked against the config's datatype and batch size. */
  private output(plan: OutputPlan, values: readonly NativeOutput[], position: number, batchSize: number): Tensor {
    const { what } = plan;
    const value = values[position];
    if (!value) throw new InferenceError('INTERNAL', `${what}: forward() returned ${values.length} tensors, none at position ${position}`);
    if (value.datatype !== plan.datatype) {
      throw new InferenceError('INTERNAL', `${what}: forward() returned ${value.datatype}, the configuration says ${plan.datatype}`);
    }
    if (Array.isArray(value.data)) return { datatype: 'BYTES', shape: this.listShape(what, value.data.length, batchSize), data: value.data };
    if (this.batching && value.shape[0] !== batchSize) {
      throw new InferenceError('INTERNAL', `${what}: forward() returned shape ${shapeToString(value.shape)}, whose first dimension should be the batch size ${batchSize}`);
    }
    const lead = this.batching ? 1 : 0;
    const shape = plan.reshape ? [...value.shape.slice(0, lead), ...mapVariableDims(value.shape.slice(lead), plan.reshape, plan.dims)] : value.shape;
    return { datatype: plan.datatype, shape, data: new plan.Data(value.data as ArrayBuffer) } as Tensor;
  }

  /** A returned List[str] has no shape of its own: [length], or [batch size, length / batch size] when batching. */
  private listShape(what: string, length: number, batchSize: number): number[] {
    if (!this.batching) return [length];
    if (length % batchSize !== 0) throw new InferenceError('INTERNAL', `${what}: forward() returned ${length} strings, which do not split into a batch of ${batchSize}`);
    return [batchSize, length / batchSize];
  }
}
