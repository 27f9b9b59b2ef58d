import { readFile } from 'node:fs/promises';
import { createTensorData, elementCount, toBf16, toFp16, type DataType, type Tensor, type TensorData } from '@tritium/core';
import { UsageError } from '../cli/usage-error.js';
import type { InputDescription, ModelDescription, RequestInputs } from './perf-client.js';

export interface InputChoices {
  readonly batchSize: number;
  readonly shapes: ReadonlyMap<string, readonly number[]>;
  /** 'random', 'zero' or a JSON file. */
  readonly inputData: string;
}

/**
 * The inputs of the requests sent, in turn: one set for random or zero data, one per
 * entry of a JSON input-data file. Each tensor has the batch dimension when the model
 * batches. Throws UsageError for a shape or file that does not fit the model.
 */
export async function requestInputs(model: ModelDescription, choices: InputChoices): Promise<RequestInputs[]> {
  if (model.maxBatchSize === 0 && choices.batchSize > 1) throw new UsageError(`-b ${choices.batchSize}: the model does not batch (max_batch_size 0)`);
  if (model.maxBatchSize > 0 && choices.batchSize > model.maxBatchSize) throw new UsageError(`-b ${choices.batchSize} is more than the model's max_batch_size ${model.maxBatchSize}`);
  for (const name of choices.shapes.keys()) {
    if (!model.inputs.some((input) => input.name === name)) throw new UsageError(`--shape ${name}: the model has no input ${name}`);
  }
  const batch = (dims: readonly number[]) => (model.maxBatchSize > 0 ? [choices.batchSize, ...dims] : [...dims]);
  if (choices.inputData === 'random' || choices.inputData === 'zero') {
    const fill = choices.inputData;
    return [Object.fromEntries(model.inputs.map((input) => {
      const shape = batch(resolvedDims(input, choices.shapes));
      return [input.name, { datatype: input.datatype, shape, data: madeData(input.datatype, elementCount(shape), fill) }];
    }))];
  }
  return (await fileEntries(choices.inputData)).map((entry, index) =>
    Object.fromEntries(model.inputs.map((input) => [input.name, fileTensor(input, entry[input.name], `${choices.inputData} entry ${index}`, choices, batch)])),
  );
}

/** The input's dims, its variable ones (-1) from --shape. */
function resolvedDims(input: InputDescription, shapes: ReadonlyMap<string, readonly number[]>): readonly number[] {
  const given = shapes.get(input.name);
  if (given) {
    const fits = given.length === input.dims.length && given.every((d, i) => input.dims[i] === -1 || input.dims[i] === d);
    if (!fits) throw new UsageError(`--shape ${input.name}:${given.join(',')} does not fit its dims [${input.dims.join(',')}] (without the batch dimension)`);
    return given;
  }
  if (input.dims.includes(-1)) throw new UsageError(`input ${input.name} has variable dims [${input.dims.join(',')}]: give --shape ${input.name}:<d1>,<d2>,...`);
  return input.dims;
}

/** Random or zero data; random BYTES are 16 letters each, as perf_analyzer sends random strings. */
function madeData(datatype: DataType, count: number, fill: 'random' | 'zero'): TensorData {
  if (datatype === 'BYTES') return Array.from({ length: count }, () => (fill === 'zero' ? '' : randomString(16)));
  const data = createTensorData(datatype, count);
  if (fill === 'zero') return data;
  for (let i = 0; i < count; i++) {
    const value = randomValue(datatype);
    (data as unknown as Array<number | bigint>)[i] = value;
  }
  return data;
}

function randomValue(datatype: DataType): number | bigint {
  switch (datatype) {
    case 'FP32':
    case 'FP64':
      return Math.random();
    // Bit patterns of values in [0, 1): 0x0000-0x3bff (FP16), 0x0000-0x3f7f (BF16).
    case 'FP16':
      return Math.floor(Math.random() * 0x3c00);
    case 'BF16':
      return Math.floor(Math.random() * 0x3f80);
    case 'BOOL':
      return Math.random() < 0.5 ? 0 : 1;
    case 'INT64':
    case 'UINT64':
      return BigInt(Math.floor(Math.random() * 128));
    default:
      // Small enough for every integer type, signed or not.
      return Math.floor(Math.random() * 128);
  }
}

function randomString(length: number): string {
  return Array.from({ length }, () => String.fromCharCode(97 + Math.floor(Math.random() * 26))).join('');
}

type FileValue = unknown[] | { content?: unknown[]; shape?: number[]; b64?: string };

/** The entries of perf_analyzer's `{"data": [...]}`: a list of entries, or of streams (lists of entries), taken in order. */
async function fileEntries(path: string): Promise<Array<Record<string, FileValue>>> {
  let parsed: { data?: unknown };
  try {
    parsed = JSON.parse(await readFile(path, 'utf8')) as { data?: unknown };
  } catch (error) {
    throw new UsageError(`--input-data ${path}: ${(error as Error).message}`);
  }
  if (!Array.isArray(parsed.data) || parsed.data.length === 0) throw new UsageError(`--input-data ${path}: it needs a non-empty "data" list`);
  return (parsed.data as unknown[]).flat() as Array<Record<string, FileValue>>;
}

/** One input from a file entry: a flat or nested list, or {content, shape}; repeated for each item of the batch. */
function fileTensor(input: InputDescription, value: FileValue | undefined, where: string, choices: InputChoices, batch: (dims: readonly number[]) => number[]): Tensor {
  if (value === undefined) throw new UsageError(`${where} has no input ${input.name}`);
  if (!Array.isArray(value) && value.b64 !== undefined) throw new UsageError(`${where}: b64 data is not read by tritium perf; give "content"`);
  const content = (Array.isArray(value) ? value : (value.content ?? [])).flat(Infinity);
  const dims = !Array.isArray(value) && value.shape ? value.shape : resolvedDims(input, choices.shapes);
  if (elementCount(dims) !== content.length) throw new UsageError(`${where}: input ${input.name} has ${content.length} elements, its shape [${dims.join(',')}] holds ${elementCount(dims)}`);
  const shape = batch(dims);
  const repeated = Array.from({ length: elementCount(shape) }, (_, i) => content[i % content.length]);
  if (input.datatype === 'BYTES') return { datatype: 'BYTES', shape, data: repeated.map(String) };
  // FP16 and BF16 are held as bit patterns; the file gives their values.
  if (input.datatype === 'FP16') return { datatype: 'FP16', shape, data: toFp16(repeated.map(Number)) };
  if (input.datatype === 'BF16') return { datatype: 'BF16', shape, data: toBf16(repeated.map(Number)) };
  const data = createTensorData(input.datatype, repeated.length);
  const wide = input.datatype === 'INT64' || input.datatype === 'UINT64';
  repeated.forEach((v, i) => ((data as unknown as Array<number | bigint>)[i] = wide ? BigInt(v as number) : Number(v)));
  return { datatype: input.datatype, shape, data };
}
