import type { NormalizedEnsembleScheduling, NormalizedModelConfig } from './schema.js';

/*
 * Triton's single-model rules for ensembles (ValidateEnsembleSchedulingConfig): what an
 * ensemble may not set, what each step must set, and that data flows from the ensemble
 * inputs through the steps to every ensemble output with no tensor left dangling.
 * Rules that need the step models' own configs belong to the ensemble scheduler.
 */

type Fail = (message: string) => never;

interface EnsembleTensor {
  readonly name: string;
  /** Written by some step's output_map. */
  isStepOutput: boolean;
  ready: boolean;
  /** Tensors a step computes this one from, and tensors computed from this one. */
  readonly sources: EnsembleTensor[];
  readonly consumers: EnsembleTensor[];
}

function buildGraph(scheduling: NormalizedEnsembleScheduling, fail: Fail): Map<string, EnsembleTensor> {
  const tensors = new Map<string, EnsembleTensor>();
  const tensor = (name: string) => {
    let found = tensors.get(name);
    if (!found) tensors.set(name, (found = { name, isStepOutput: false, ready: false, sources: [], consumers: [] }));
    return found;
  };
  scheduling.step.forEach((step, i) => {
    if (!step.model_name) fail(`ensemble_scheduling.step[${i}] must specify 'model_name'`);
    if (Object.keys(step.input_map).length === 0) fail(`ensemble_scheduling.step[${i}] must specify 'input_map'`);
    if (Object.keys(step.output_map).length === 0) fail(`ensemble_scheduling.step[${i}] must specify 'output_map'`);
    const outputs = Object.values(step.output_map).map((name) => {
      const output = tensor(name);
      if (output.isStepOutput) fail(`ensemble tensor '${name}' appears in more than one output_map (again in ensemble_scheduling.step[${i}])`);
      output.isStepOutput = true;
      return output;
    });
    for (const name of Object.values(step.input_map)) {
      const input = tensor(name);
      for (const output of outputs) {
        output.sources.push(input);
        input.consumers.push(output);
      }
    }
  });
  return tensors;
}

/** The farthest not-ready tensor upstream of `tensor` (other than itself), to say where the flow breaks. */
function brokenSource(tensor: EnsembleTensor): EnsembleTensor | undefined {
  const seen = new Set<string>();
  let last: EnsembleTensor | undefined;
  for (let sources = tensor.sources; sources.length; ) {
    const next = sources.find((source) => !source.ready && !seen.has(source.name));
    if (!next) break;
    seen.add(next.name);
    last = next;
    sources = next.sources;
  }
  return last === tensor ? undefined : last;
}

export function validateEnsemble(config: NormalizedModelConfig, scheduling: NormalizedEnsembleScheduling, fail: Fail): void {
  if (config.instance_group.length) fail(`an ensemble cannot specify 'instance_group' (its steps' models have instances)`);
  if (config.optimization) fail(`an ensemble cannot specify 'optimization'`);
  if (config.model_warmup.length) fail(`an ensemble cannot specify 'model_warmup'`);
  if (scheduling.step.length === 0) fail(`ensemble_scheduling must specify at least one 'step'`);
  const tensors = buildGraph(scheduling, fail);

  // Propagate readiness from the ensemble inputs: a step's outputs are ready once all its inputs are.
  const queue: EnsembleTensor[] = [];
  for (const input of config.input) {
    const tensor = tensors.get(input.name);
    if (!tensor) fail(`ensemble input '${input.name}' is not used by any step`);
    tensor.ready = true;
    queue.push(tensor);
  }
  for (let tensor = queue.shift(); tensor; tensor = queue.shift()) {
    for (const consumer of tensor.consumers) {
      if (!consumer.ready && consumer.sources.every((source) => source.ready)) {
        consumer.ready = true;
        queue.push(consumer);
      }
    }
  }

  const outputs = new Set<string>();
  for (const output of config.output) {
    const tensor = tensors.get(output.name);
    if (!tensor) fail(`ensemble output '${output.name}' is not produced by any step`);
    if (!tensor.ready) {
      const source = brokenSource(tensor);
      fail(`ensemble output '${output.name}' is not written${source ? `: it depends on '${source.name}', which is not connected to the ensemble inputs` : ''}`);
    }
    outputs.add(output.name);
  }
  for (const tensor of tensors.values()) {
    if (!outputs.has(tensor.name) && (!tensor.ready || tensor.consumers.length === 0)) {
      fail(`ensemble tensor '${tensor.name}' is unused: nothing ${tensor.ready ? 'reads it' : 'writes it from the ensemble inputs'}`);
    }
  }
}
