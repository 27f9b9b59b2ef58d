import { InferenceError, elementCount, gatherBatchInput, scatterBatchOutputs, shapeToString } from '@tritium/core/backend';
import type { BackendInstance, BackendModel, BackendRequest, ExecuteResult, ExecutionReport, ModelContext, NormalizedModelConfig, Tensor } from '@tritium/core/backend';
import { finish } from './forest.js';
import type { Forest } from './forest.js';
import type { ForestPool, PooledForest } from './forest-pool.js';
import { loadForest, modelFilePath } from './model-file.js';
import { classifies, outputWidth, shapeOutput } from './outputs.js';
import { readParameters } from './parameters.js';
import type { FilParameters } from './parameters.js';
import { predictYielding } from './yielding-predict.js';

/** FIL's tensor names. */
export const INPUT_NAME = 'input__0';
export const OUTPUT_NAME = 'output__0';

/** A loaded forest; its instances share it (it is read-only). */
export class FilModel implements BackendModel {
  readonly description: string;
  /** The forest in the backend's pool, from the first large batch on. */
  private pooled: PooledForest | undefined;

  private constructor(
    private readonly name: string,
    private readonly forest: Forest,
    private readonly parameters: FilParameters,
    private readonly batching: boolean,
    /** Values per row of output__0. */
    private readonly width: number,
    private readonly pool: ForestPool,
  ) {
    this.description = `FIL (TypeScript): ${parameters.modelType}, ${forest.roots.length} trees, ${forest.numFeatures} features`;
  }

  static async load(context: ModelContext, pool: ForestPool): Promise<FilModel> {
    const { config } = context;
    const parameters = readParameters(config);
    const path = await modelFilePath(context.versionDirectory, parameters.modelType, config.default_model_filename, context.name);
    const forest = await loadForest(path, parameters.modelType, parameters.allowUnknownField);
    const width = checkTensors(config, forest, parameters);
    return new FilModel(context.name, forest, parameters, config.max_batch_size > 0, width, pool);
  }

  async createInstance(): Promise<BackendInstance> {
    return { execute: (requests, report) => this.execute(requests, report) };
  }

  async finalize(): Promise<void> {
    await this.pooled?.release();
  }

  private async execute(requests: readonly BackendRequest[], report: ExecutionReport | undefined): Promise<ExecuteResult> {
    if (!this.batching) {
      // One run per request: its compute phases are the execution's only when it is the only one.
      const phases = requests.length === 1 ? report : undefined;
      const results: Array<Record<string, Tensor> | Error> = [];
      for (const request of requests) results.push(await this.run(request.inputs[INPUT_NAME]!, phases).catch((error: Error) => error));
      return results;
    }
    return scatterBatchOutputs(requests, await this.run(gatherBatchInput(requests, INPUT_NAME), report));
  }

  /** Predicts for `input`'s rows; `report` hears when the walks start (the inputs ready) and end (the outputs being shaped). */
  private async run(input: Tensor, report: ExecutionReport | undefined): Promise<Record<string, Tensor>> {
    const features = this.forest.numFeatures;
    const rowShape = input.shape.slice(0, -1);
    const rows = elementCount(rowShape);
    if (input.datatype !== 'FP32' || input.shape.at(-1) !== features) {
      throw new InferenceError('INVALID_ARG', `model '${this.name}': ${INPUT_NAME} must be FP32 with ${features} features in its last dimension, got ${input.datatype} ${shapeToString(input.shape)}`);
    }
    const x = input.data as Float32Array;
    report?.inputsReady();
    const predictions = this.parameters.threads > 1 && rows * this.forest.roots.length >= PARALLEL_WALKS ? await this.predictOnThreads(x, rows) : await predictYielding(this.forest, x, rows);
    report?.outputsStarted();
    const data = shapeOutput(this.forest, this.parameters, this.width, predictions, rows);
    return { [OUTPUT_NAME]: { datatype: 'FP32', shape: [...rowShape, this.width], data } };
  }

  /** A large batch, split among the pool's worker threads (the forest goes into the pool with the first one). */
  private async predictOnThreads(x: Float32Array, rows: number): Promise<Float64Array> {
    const { forest } = this;
    this.pooled ??= this.pool.add(forest, `model '${this.name}'`);
    const sums = await this.pooled.sums(x, rows, this.parameters.threads);
    finish(forest, sums, rows);
    return sums;
  }
}

/** Tree walks in a batch from which it is split among worker threads: half a millisecond of work or more, against about 0.1 ms to hand it over. */
const PARALLEL_WALKS = 20_000;

/** FIL's contract: one FP32 input of the model's feature count, one FP32 output of its width; returns that width. */
function checkTensors(config: NormalizedModelConfig, forest: Forest, parameters: FilParameters): number {
  const fail = (problem: string) => new InferenceError('INVALID_ARG', `model '${config.name}': ${problem}`);
  const [input] = config.input;
  const [output] = config.output;
  if (config.input.length !== 1 || input!.name !== INPUT_NAME) throw fail(`a FIL model has one input, '${INPUT_NAME}'`);
  if (config.output.length !== 1 || output!.name !== OUTPUT_NAME) throw fail(`a FIL model has one output, '${OUTPUT_NAME}'`);
  for (const tensor of [input!, output!]) {
    if (tensor.data_type !== 'TYPE_FP32') throw fail(`'${tensor.name}' is ${tensor.data_type}; FIL takes and gives TYPE_FP32 only`);
  }
  const expect = (dims: number[], last: number, what: string) => {
    const n = dims.at(-1);
    if (n !== undefined && n !== -1 && n !== last) throw fail(`${what} has last dimension ${n}, but the model has ${last}`);
  };
  expect(input!.dims, forest.numFeatures, `'${INPUT_NAME}' (features)`);
  const width = outputWidth(forest, parameters, output!.dims.at(-1) ?? -1);
  expect(output!.dims, width, `'${OUTPUT_NAME}' (${classifies(forest, parameters) ? (parameters.predictProba ? 'class probabilities' : 'the class') : 'predictions'})`);
  return width;
}
