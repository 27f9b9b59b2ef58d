import { requestShape } from '../config/request-shape.js';
import type { ModelConfig } from '../config/schema.js';
import { InferenceError } from '../errors.js';
import { dataTypeFromConfig, type DataType } from '../tensor/datatype.js';
import { shapeMatches, shapeToString } from '../tensor/shape.js';
import type { Tensor } from '../tensor/tensor.js';
import { emitTritiumWarning } from '../warnings.js';

interface OutputSpec {
  readonly datatype: DataType;
  /** requestShape(): dims, after a -1 batch dimension for a batching model. */
  readonly shape: readonly number[];
}

/**
 * A model's outputs as its config lists them, and the check of each response against
 * them that Triton's core makes: an output the config does not list fails the request;
 * a datatype or shape that differs passes through (Triton's Python models rely on
 * that), with one process warning per output so the mismatch is not silent.
 */
export class ModelOutputs {
  private readonly specs = new Map<string, OutputSpec>();
  private readonly warned = new Set<string>();

  constructor(private readonly config: ModelConfig) {
    for (const output of config.output ?? []) {
      this.specs.set(output.name!, { datatype: dataTypeFromConfig(output.data_type!), shape: requestShape(config, output) });
    }
  }

  /** Throws INVALID_ARG, in Triton's words, for an output the config does not list. */
  check(outputs: Readonly<Record<string, Tensor>>): void {
    for (const name in outputs) {
      const spec = this.specs.get(name);
      if (!spec) throw new InferenceError('INVALID_ARG', `unexpected inference output '${name}' for model '${this.config.name}'`);
      if (!this.warned.has(name)) this.warnIfDifferent(name, outputs[name]!, spec);
    }
  }

  private warnIfDifferent(name: string, tensor: Tensor, spec: OutputSpec): void {
    // Checked on every response: the usual match allocates nothing.
    if (tensor.datatype === spec.datatype && shapeMatches(tensor.shape, spec.shape)) return;
    const differences: string[] = [];
    if (tensor.datatype !== spec.datatype) differences.push(`datatype ${tensor.datatype} where the config says ${spec.datatype}`);
    if (!shapeMatches(tensor.shape, spec.shape)) {
      differences.push(`shape ${shapeToString(tensor.shape)} where the config says ${shapeToString(spec.shape)}`);
    }
    if (differences.length === 0) return;
    this.warned.add(name);
    emitTritiumWarning(
      'TRITIUM_W010',
      `model '${this.config.name}' output '${name}' has ${differences.join(' and ')}; it is passed through as it is, as Triton does (warned once per loaded model and output)`,
    );
  }
}
