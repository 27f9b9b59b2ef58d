import type { NormalizedModelConfig } from '../config/schema.js';
import { InferenceError } from '../errors.js';

interface TensorType {
  readonly dataType: string;
  readonly dims: readonly number[];
  /** Who makes it, for errors: "ensemble input" or "step 2 (model 'x') output 'Y'". */
  readonly from: string;
}

/** The models an ensemble's steps use. */
export function ensembleMembers(config: NormalizedModelConfig): string[] {
  return [...new Set((config.ensemble_scheduling?.step ?? []).map((step) => step.model_name))];
}

/**
 * The load-time checks that need the step models' configs (Triton's ensemble
 * validation): each step's input_map and output_map name tensors its model has, and a
 * tensor that passes between steps, or into or out of the ensemble, has one datatype
 * and compatible shapes (-1 matches any size; a batching model's tensors have the batch
 * dimension first) wherever it is used. Each fault is an
 * INVALID_ARG naming the ensemble, the step and the tensor.
 */
export function checkEnsembleMembers(name: string, config: NormalizedModelConfig, memberConfig: (model: string, version: number | undefined) => NormalizedModelConfig): void {
  const fail = (detail: string): never => {
    throw new InferenceError('INVALID_ARG', `ensemble '${name}': ${detail}`);
  };
  const steps = config.ensemble_scheduling!.step;
  const members = steps.map((step) => {
    const version = Number(step.model_version);
    return memberConfig(step.model_name, version > 0 ? version : undefined);
  });
  // Shapes as requests carry them: a batching model's tensors have the batch dimension first.
  const shape = (owner: NormalizedModelConfig, dims: readonly (number | bigint)[]) => [...(Number(owner.max_batch_size) > 0 ? [-1] : []), ...dims.map(Number)];
  steps.forEach((step, i) => {
    if (members[i]!.model_transaction_policy.decoupled && !config.model_transaction_policy.decoupled) {
      fail(`step ${i} (model '${step.model_name}') is decoupled, so the ensemble must be too (model_transaction_policy { decoupled: true })`);
    }
  });
  const made = new Map<string, TensorType>();
  for (const input of config.input) made.set(input.name, { dataType: input.data_type, dims: shape(config, input.dims), from: 'ensemble input' });
  steps.forEach((step, i) => {
    const where = `step ${i} (model '${step.model_name}')`;
    for (const [memberOutput, tensor] of Object.entries(step.output_map)) {
      const output = members[i]!.output.find((o) => o.name === memberOutput) ?? fail(`${where} maps output '${memberOutput}', which model '${step.model_name}' does not have`);
      made.set(tensor, { dataType: output.data_type, dims: shape(members[i]!, output.dims), from: `${where} output '${memberOutput}'` });
    }
  });
  steps.forEach((step, i) => {
    const where = `step ${i} (model '${step.model_name}')`;
    for (const [memberInput, tensor] of Object.entries(step.input_map)) {
      const input = members[i]!.input.find((x) => x.name === memberInput) ?? fail(`${where} maps input '${memberInput}', which model '${step.model_name}' does not have`);
      agree(made.get(tensor)!, { dataType: input.data_type, dims: shape(members[i]!, input.dims), from: `${where} input '${memberInput}'` }, tensor, fail);
    }
  });
  for (const output of config.output) {
    const tensor = made.get(output.name);
    if (tensor) agree(tensor, { dataType: output.data_type, dims: shape(config, output.dims), from: 'ensemble output' }, output.name, fail);
  }
}

function agree(made: TensorType, used: TensorType, tensor: string, fail: (detail: string) => never): void {
  if (made.dataType !== used.dataType) {
    fail(`tensor '${tensor}' is ${made.dataType} as ${made.from} but ${used.dataType} as ${used.from}`);
  }
  const compatible = made.dims.length === used.dims.length && made.dims.every((d, k) => d === -1 || used.dims[k] === -1 || d === used.dims[k]);
  if (!compatible) fail(`tensor '${tensor}' has dims [${made.dims.join(',')}] as ${made.from} but [${used.dims.join(',')}] as ${used.from}`);
}
