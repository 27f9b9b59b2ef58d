import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { NormalizedModelConfig } from '../config/schema.js';
import { InferenceError } from '../errors.js';
import { pathInside } from '../model/path-inside.js';
import { deserializeBytesTensor } from '../tensor/bytes.js';
import { createTensorData } from '../tensor/data.js';
import { dataTypeFromConfig, typedArrayConstructor, type DataType } from '../tensor/datatype.js';
import { elementCount, shapeToString } from '../tensor/shape.js';
import type { Tensor } from '../tensor/tensor.js';

interface StateSpec {
  readonly inputName: string;
  readonly outputName: string;
  /** The state a sequence starts from, with the batch dimension when the model batches. */
  readonly initial: Tensor;
}

/**
 * Triton's implicit state: for each `sequence_batching.state`, the server keeps every
 * live sequence's last `output_name` tensor and hands it back as `input_name` on the
 * sequence's next request. A sequence starts from the configured `initial_state` (zeros,
 * or raw data from `<model>/initial_state/<data_file>`), or from zeros with every
 * variable dim 0 when none is given (an empty state, for models that grow it).
 */
export class SequenceStates {
  readonly outputNames: readonly string[];
  private readonly current = new Map<string, Record<string, Tensor>>();
  private readonly initial: Record<string, Tensor> = {};

  private constructor(private readonly specs: readonly StateSpec[]) {
    this.outputNames = specs.map((spec) => spec.outputName);
    for (const spec of specs) this.initial[spec.inputName] = spec.initial;
  }

  /** The model's states with their initial values read, or undefined when it has none. */
  static async load(config: NormalizedModelConfig, modelDirectory: string): Promise<SequenceStates | undefined> {
    const states = config.sequence_batching?.state ?? [];
    if (states.length === 0) return undefined;
    const lead = config.max_batch_size > 0 ? [1] : [];
    const specs = await Promise.all(
      states.map(async (state) => {
        const datatype = dataTypeFromConfig(state.data_type);
        const given = state.initial_state[0];
        const where = `model '${config.name}' state '${state.input_name}'`;
        const initial = given
          ? await initialValue(datatype, given.dims, given.data_file, modelDirectory, `${where} initial_state '${given.name}'`)
          : zeros(datatype, state.dims.map((dim) => (dim === -1 ? 0 : dim)));
        return { inputName: state.input_name, outputName: state.output_name, initial: { ...initial, shape: [...lead, ...initial.shape] } };
      }),
    );
    return new SequenceStates(specs);
  }

  /** The state inputs of a sequence's next step: the initial state at its start. */
  inputs(key: string, start: boolean): Record<string, Tensor> {
    if (start) this.current.delete(key);
    return this.current.get(key) ?? this.initial;
  }

  /** The state inputs of an empty slot in a direct batch. */
  get initialInputs(): Record<string, Tensor> {
    return this.initial;
  }

  /** Keeps a step's state outputs for the sequence's next step; returns the outputs without them. */
  update(key: string, outputs: Readonly<Record<string, Tensor>>): Record<string, Tensor> {
    const rest: Record<string, Tensor> = { ...outputs };
    const next: Record<string, Tensor> = {};
    for (const spec of this.specs) {
      const state = outputs[spec.outputName];
      if (!state) throw new InferenceError('INTERNAL', `the backend returned no state output '${spec.outputName}'`);
      next[spec.inputName] = state;
      delete rest[spec.outputName];
    }
    this.current.set(key, next);
    return rest;
  }

  forget(key: string): void {
    this.current.delete(key);
  }
}

function zeros(datatype: DataType, shape: number[]): Tensor {
  return { datatype, shape, data: createTensorData(datatype, elementCount(shape)) };
}

async function initialValue(datatype: DataType, dims: readonly number[], dataFile: string | undefined, modelDirectory: string, what: string): Promise<Tensor> {
  const shape = [...dims];
  if (shape.some((dim) => dim < 0)) throw new InferenceError('INVALID_ARG', `${what}: dims ${shapeToString(shape)} must be fully specified`);
  if (dataFile === undefined) return zeros(datatype, shape);
  const path = await pathInside(join(modelDirectory, 'initial_state'), dataFile, `${what}: data_file`);
  const bytes = await readFile(path).catch((error: Error) => {
    throw new InferenceError('INVALID_ARG', `${what}: cannot read data_file '${path}': ${error.message}`);
  });
  const count = elementCount(shape);
  const TypedArray = typedArrayConstructor(datatype);
  if (!TypedArray) return { datatype, shape, data: deserializeBytesTensor(bytes, count, what) };
  if (bytes.byteLength !== count * TypedArray.BYTES_PER_ELEMENT) {
    throw new InferenceError('INVALID_ARG', `${what}: data_file '${path}' holds ${bytes.byteLength} bytes, ${count * TypedArray.BYTES_PER_ELEMENT} expected for ${datatype} ${shapeToString(shape)}`);
  }
  const data = new TypedArray(count);
  new Uint8Array(data.buffer).set(bytes);
  return { datatype, shape, data };
}
