import type { NormalizedDynamicBatching, NormalizedModelConfig, NormalizedQueuePolicy, NormalizedSequenceBatching, SequenceControlKind } from './schema.js';

/*
 * Triton's rules for the dynamic and sequence batchers (the scheduling parts of
 * ValidateModelConfig and its sequence-control helpers).
 */

type Fail = (message: string) => never;

/** Controls carried as a false/true pair of values; CORRID carries the id itself. */
const BOOLEAN_CONTROL_KINDS: readonly SequenceControlKind[] = ['CONTROL_SEQUENCE_START', 'CONTROL_SEQUENCE_END', 'CONTROL_SEQUENCE_READY'];
const FALSE_TRUE_FIELDS = ['int32_false_true', 'fp32_false_true', 'bool_false_true'] as const;
const CORRELATION_ID_DATA_TYPES = new Set(['TYPE_UINT64', 'TYPE_INT64', 'TYPE_UINT32', 'TYPE_INT32', 'TYPE_STRING']);

function validatePreferredBatchSizes(where: string, sizes: readonly number[], maxBatchSize: number, fail: Fail): void {
  for (const size of sizes) {
    if (size <= 0) fail(`${where}.preferred_batch_size ${size} must be positive`);
    if (size > maxBatchSize) fail(`${where}.preferred_batch_size ${size} must not exceed max_batch_size ${maxBatchSize}`);
  }
}

function validateDynamicBatching(batching: NormalizedDynamicBatching, maxBatchSize: number, fail: Fail): void {
  validatePreferredBatchSizes('dynamic_batching', batching.preferred_batch_size, maxBatchSize, fail);
  const levels = batching.priority_levels;
  const policies = Object.entries(batching.priority_queue_policy);
  // priority_levels 0 turns priorities off, and with them these two fields.
  if (levels !== 0) {
    const level = batching.default_priority_level;
    if (level < 1 || level > levels) fail(`dynamic_batching.default_priority_level ${level} must be in range [1, ${levels}] (priority_levels)`);
    const outside = policies.find(([key]) => Number(key) < 1 || Number(key) > levels);
    if (outside) fail(`dynamic_batching.priority_queue_policy has priority level ${outside[0]}, outside the range [1, ${levels}] (priority_levels)`);
  }
  if (!batching.preserve_ordering) return;
  if (levels > 1) fail(`dynamic_batching.preserve_ordering allows only one priority level, but priority_levels is ${levels}`);
  // A delayed request would overtake nothing but hold up everything behind it.
  const delays = (policy: NormalizedQueuePolicy) => policy.timeout_action === 'DELAY' && policy.default_timeout_microseconds !== 0;
  if (delays(batching.default_queue_policy)) {
    fail(`dynamic_batching.default_queue_policy has timeout_action DELAY, which 'preserve_ordering' does not allow`);
  }
  const delayed = policies.find(([, policy]) => delays(policy));
  if (delayed) fail(`dynamic_batching.priority_queue_policy for level ${delayed[0]} has timeout_action DELAY, which 'preserve_ordering' does not allow`);
}

function validateSequenceControls(batching: NormalizedSequenceBatching, fail: Fail): void {
  const names = new Set<string>();
  batching.control_input.forEach((input, i) => {
    if (!input.name) fail(`sequence_batching.control_input[${i}] must have a 'name'`);
    if (names.has(input.name)) fail(`sequence_batching control tensor '${input.name}' is given more than once, for multiple control kinds`);
    names.add(input.name);
  });
  const controlsOf = (kind: SequenceControlKind) =>
    batching.control_input.flatMap((input) => input.control.filter((control) => control.kind === kind).map((control) => ({ tensor: input.name, control })));

  for (const kind of BOOLEAN_CONTROL_KINDS) {
    const found = controlsOf(kind);
    if (found.length > 1) fail(`sequence_batching has multiple ${kind} control tensors: ${found.map(({ tensor }) => `'${tensor}'`).join(', ')}`);
    if (found.length === 0) continue;
    const { tensor, control } = found[0]!;
    const given = FALSE_TRUE_FIELDS.filter((field) => control[field].length > 0);
    const options = `'int32_false_true', 'fp32_false_true' or 'bool_false_true'`;
    if (given.length === 0) fail(`sequence_batching control ${kind} on tensor '${tensor}' must specify one of ${options}`);
    if (given.length > 1) fail(`sequence_batching control ${kind} on tensor '${tensor}' specifies more than one of ${options}`);
    const field = given[0]!;
    if (control[field].length !== 2) fail(`sequence_batching control ${kind} on tensor '${tensor}': '${field}' must have exactly 2 entries (false, true)`);
  }

  const correlationIds = controlsOf('CONTROL_SEQUENCE_CORRID');
  if (correlationIds.length > 1) fail(`sequence_batching has multiple CONTROL_SEQUENCE_CORRID control tensors: ${correlationIds.map(({ tensor }) => `'${tensor}'`).join(', ')}`);
  const correlationId = correlationIds[0];
  if (correlationId) {
    const { tensor, control } = correlationId;
    if (FALSE_TRUE_FIELDS.some((field) => control[field].length > 0)) {
      fail(`sequence_batching control CONTROL_SEQUENCE_CORRID on tensor '${tensor}' must not specify 'int32_false_true', 'fp32_false_true' or 'bool_false_true'`);
    }
    if (!CORRELATION_ID_DATA_TYPES.has(control.data_type)) {
      fail(`sequence_batching control CONTROL_SEQUENCE_CORRID on tensor '${tensor}' has 'data_type' ${control.data_type}; allowed are ${[...CORRELATION_ID_DATA_TYPES].join(', ')}`);
    }
  }
}

function validateSequenceBatching(config: NormalizedModelConfig, batching: NormalizedSequenceBatching, fail: Fail): void {
  if (config.response_cache.enable) fail(`'response_cache' does not support sequence_batching models yet; disable the response cache`);
  validateSequenceControls(batching, fail);
  if (batching.oldest) validatePreferredBatchSizes('sequence_batching.oldest', batching.oldest.preferred_batch_size, config.max_batch_size, fail);
  const utilization = batching.direct?.minimum_slot_utilization;
  if (utilization !== undefined && !(utilization >= 0 && utilization <= 1)) {
    fail(`sequence_batching.direct.minimum_slot_utilization ${utilization} must be in range [0.0, 1.0]`);
  }
}

export function validateScheduling(config: NormalizedModelConfig, fail: Fail): void {
  if (config.dynamic_batching) validateDynamicBatching(config.dynamic_batching, config.max_batch_size, fail);
  if (config.sequence_batching) validateSequenceBatching(config, config.sequence_batching, fail);
}
