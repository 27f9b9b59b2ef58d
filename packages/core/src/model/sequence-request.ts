import type { NormalizedModelConfig } from '../config/schema.js';
import type { SequenceOptions } from '../contract/inference.js';
import { InferenceError } from '../errors.js';
import { describeValue } from '../tensor/convert.js';

const MAX_UINT64 = 2n ** 64n - 1n;

/** The numeric range of each CORRID data type, which a numeric correlation id must fit. */
const CORRELATION_ID_RANGES: Readonly<Record<string, readonly [bigint, bigint]>> = {
  TYPE_UINT64: [0n, MAX_UINT64],
  TYPE_INT64: [0n, 2n ** 63n - 1n],
  TYPE_UINT32: [0n, 2n ** 32n - 1n],
  TYPE_INT32: [0n, 2n ** 31n - 1n],
};

/**
 * A copy of the caller's sequence options (later changes to them do not reach a
 * scheduler). The id is a non-negative integer (a bigint up to 2^64-1 where a number
 * cannot hold it) or a non-empty string, as Triton's correlation ids are.
 */
export function checkSequenceOptions(sequence: unknown): SequenceOptions | undefined {
  if (sequence === undefined) return undefined;
  if (sequence === null || typeof sequence !== 'object' || Array.isArray(sequence)) throw invalid('`sequence` must be an object { id, start?, end? }');
  const { id, start, end } = sequence as Record<string, unknown>;
  const numeric = (Number.isSafeInteger(id) && (id as number) >= 0) || (typeof id === 'bigint' && id >= 0n && id <= MAX_UINT64);
  if (!numeric && (typeof id !== 'string' || id === '')) {
    throw invalid(`\`sequence.id\` must be a non-negative integer (a bigint up to 2^64-1) or a non-empty string, got ${describeValue(id)}`);
  }
  for (const [flag, value] of [['start', start], ['end', end]] as const) {
    if (value !== undefined && typeof value !== 'boolean') throw invalid(`\`sequence.${flag}\` must be a boolean, got ${describeValue(value)}`);
  }
  return { id: id as SequenceOptions['id'], start: start === true, end: end === true };
}

/**
 * Triton's rules for a request to a sequence-batching model: it names its sequence
 * with a non-zero (or non-empty) correlation id of the kind the CORRID control takes,
 * and has batch size 1. Built once per model: the CORRID type is looked up here.
 */
export function sequenceRequestCheck(config: NormalizedModelConfig): (sequence: SequenceOptions | undefined, batchSize: number) => void {
  const idType = correlationIdType(config);
  return (sequence, batchSize) => {
    const id = sequence?.id;
    if (id === undefined || id === 0 || id === 0n) {
      throw invalid('a request to a sequence batching model must give `sequence.id`, a non-zero integer or a non-empty string');
    }
    if (batchSize !== 1) throw invalid(`a request to a sequence batching model must have batch size 1, got ${batchSize}`);
    if (idType === undefined) return;
    if (idType === 'TYPE_STRING') {
      if (typeof id !== 'string') throw invalid(`the model's CORRID control takes string correlation ids, got ${describeValue(id)}`);
      return;
    }
    if (typeof id === 'string') throw invalid(`the model's CORRID control takes ${idType.slice(5)} correlation ids, got the string ${describeValue(id)}`);
    const [, max] = CORRELATION_ID_RANGES[idType]!;
    if (BigInt(id) > max) throw invalid(`correlation id ${describeValue(id)} does not fit the model's CORRID control type ${idType.slice(5)}`);
  };
}

/** The data type of the model's CONTROL_SEQUENCE_CORRID control, if it has one. */
function correlationIdType(config: NormalizedModelConfig): string | undefined {
  for (const input of config.sequence_batching?.control_input ?? []) {
    for (const control of input.control) if (control.kind === 'CONTROL_SEQUENCE_CORRID') return control.data_type;
  }
  return undefined;
}

function invalid(detail: string): InferenceError {
  return new InferenceError('INVALID_ARG', detail);
}
