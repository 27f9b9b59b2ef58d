import { EMPTY_FINAL_RESPONSE, parameterOptions, type ParameterOptions } from '../request-parameters.js';
import { invalid } from '../wire-values.js';
import { parameterValues, type WireParameter } from './wire-parameters.js';

/** The InferParameter members Triton's gRPC frontend takes for each parameter it reads itself; it refuses any other. */
const MEMBERS = new Map<string, readonly string[]>([
  ['sequence_id', ['int64_param', 'string_param']],
  ['sequence_start', ['bool_param']],
  ['sequence_end', ['bool_param']],
  ['priority', ['int64_param', 'uint64_param']],
  ['timeout', ['int64_param']],
  [EMPTY_FINAL_RESPONSE, ['bool_param']],
]);

/** A ModelInferRequest's parameters, read. */
export interface RequestParameters {
  readonly options: ParameterOptions;
  /** Triton's `triton_enable_empty_final_response`: a decoupled stream's end is reported by a response of its own. */
  readonly emptyFinalResponse: boolean;
}

const NONE: RequestParameters = { options: {}, emptyFinalResponse: false };

/**
 * Reads a ModelInferRequest's parameters as Triton's gRPC frontend does: each parameter
 * Triton reads itself only from the members it takes for it; a negative int64
 * `sequence_id` as the unsigned correlation id of the same 64 bits; a priority beyond
 * 2^53 as the model's default level; every other parameter passed to the model.
 */
export function requestParameters(wire: Readonly<Record<string, WireParameter>>): RequestParameters {
  const values = parameterValues(wire, 'request') as Record<string, unknown> | undefined;
  if (values === undefined) return NONE;
  for (const [name, parameter] of Object.entries(wire)) {
    const members = MEMBERS.get(name);
    const member = parameter.parameter_choice!;
    if (members && !members.includes(member)) {
      throw invalid(`request parameter '${name}' takes ${members.join(' or ')}, not ${member}`);
    }
  }
  const { priority, sequence_id: sequenceId } = values;
  // Core's priority is a number; one beyond 2^53 is beyond any model's priority levels,
  // which Triton (and core) read as the model's default level.
  if (typeof priority === 'bigint' && priority > 0n) values.priority = Number.MAX_SAFE_INTEGER;
  if ((typeof sequenceId === 'number' || typeof sequenceId === 'bigint') && sequenceId < 0) values.sequence_id = BigInt.asUintN(64, BigInt(sequenceId));
  // HTTP's own binary_data_output is an ordinary parameter here: it reaches the model.
  return { options: parameterOptions(values), emptyFinalResponse: values[EMPTY_FINAL_RESPONSE] === true };
}
