import { z } from 'zod';
import { INTEGER_RANGES, type ProtoIntegerType } from './proto-integers.js';

/*
 * The zod mirror of Triton's model_config.proto (ModelConfig), field for field, in the
 * proto's declaration order and with its snake_case names. It is the single source of
 * truth for the config layer: the text-format parser and printer and the JSON form read
 * the field layout off these schemas (see descriptor.ts), so a field added here is
 * parsed, printed and serialized without further changes.
 *
 * Two views of one schema:
 * - `z.input` (ModelConfig …): what a config.pbtxt or a user object says; every field optional.
 * - `z.output` (NormalizedModelConfig …): after `ModelConfigSchema.parse`, every scalar,
 *   repeated and map field holds its proto3 default when it was absent. Sub-messages whose
 *   presence means something to Triton (version_policy, reshape, the scheduling oneof, …)
 *   stay optional; the few whose presence means nothing get their defaults too (`prefault`).
 */

/** How a JS number is stored on the wire; decides range, text syntax and JSON form. */
export type ProtoNumberType = ProtoIntegerType | 'float' | 'double';

/** Marks number (and uint64 map-key) schemas with their proto type. */
export const protoNumberTypes = z.registry<{ proto: ProtoNumberType }>();

/** Marks message schemas with their oneof groups (field names that exclude each other). */
export const protoOneofs = z.registry<{ oneofs: readonly (readonly string[])[] }>();

const integer = (proto: ProtoIntegerType) => {
  const [min, max] = INTEGER_RANGES[proto];
  return z
    .number()
    .min(Number(min))
    .max(Number(max))
    .refine(Number.isInteger, 'expected an integer')
    .register(protoNumberTypes, { proto });
};
const int32 = () => integer('int32');
const uint32 = () => integer('uint32');
const int64 = () => integer('int64');
const uint64 = () => integer('uint64');
// Protobuf floats admit inf and nan, which z.number() refuses.
const floating = (proto: 'float' | 'double') =>
  z
    .custom<number>((value) => typeof value === 'number', { message: 'expected a number' })
    .register(protoNumberTypes, { proto });

const string = () => z.string().default('');
const bool = () => z.boolean().default(false);
const num = (schema: z.ZodType<number, number>) => schema.default(0);
const repeated = <T extends z.ZodType>(element: T) => z.array(element).default(() => []);
const stringMap = <T extends z.ZodType>(value: T) => z.record(z.string(), value).default(() => ({}));
// Map keys are object keys, hence strings; a uint64-keyed map keeps the decimal digits.
const uint64Map = <T extends z.ZodType>(value: T) =>
  z
    .record(z.string().regex(/^\d+$/, 'expected an unsigned integer key').register(protoNumberTypes, { proto: 'uint64' }), value)
    .default(() => ({}));
/** An enum whose zero value (its first name) is the proto3 default. */
const enumField = <const T extends readonly [string, ...string[]]>(values: T) => z.enum(values).default(values[0]);

/** A proto message: unknown keys are refused, and at most one member of each oneof is set. */
function message<S extends z.ZodRawShape>(shape: S, oneofs: readonly (readonly (keyof S & string)[])[] = []) {
  const schema = z.strictObject(shape).superRefine((value, ctx) => {
    for (const group of oneofs) {
      const set = group.filter((field) => (value as Record<string, unknown>)[field] !== undefined);
      if (set.length > 1) ctx.addIssue({ code: 'custom', message: `only one of ${set.join(', ')} may be set (they are a oneof)` });
    }
  });
  return oneofs.length > 0 ? schema.register(protoOneofs, { oneofs }) : schema;
}

// Enum values are listed in proto order from 0 without gaps, so a value's index is its number.
const DATA_TYPES = [
  'TYPE_INVALID', 'TYPE_BOOL', 'TYPE_UINT8', 'TYPE_UINT16', 'TYPE_UINT32', 'TYPE_UINT64', 'TYPE_INT8',
  'TYPE_INT16', 'TYPE_INT32', 'TYPE_INT64', 'TYPE_FP16', 'TYPE_FP32', 'TYPE_FP64', 'TYPE_STRING', 'TYPE_BF16',
] as const;
const INSTANCE_GROUP_KINDS = ['KIND_AUTO', 'KIND_GPU', 'KIND_CPU', 'KIND_MODEL'] as const;
const BATCH_INPUT_KINDS = [
  'BATCH_ELEMENT_COUNT', 'BATCH_ACCUMULATED_ELEMENT_COUNT', 'BATCH_ACCUMULATED_ELEMENT_COUNT_WITH_ZERO',
  'BATCH_MAX_ELEMENT_COUNT_AS_SHAPE', 'BATCH_ITEM_SHAPE', 'BATCH_ITEM_SHAPE_FLATTEN',
] as const;
const SEQUENCE_CONTROL_KINDS = [
  'CONTROL_SEQUENCE_START', 'CONTROL_SEQUENCE_READY', 'CONTROL_SEQUENCE_END', 'CONTROL_SEQUENCE_CORRID',
] as const;

const dataType = () => enumField(DATA_TYPES);
const dims = () => repeated(int64());

const RateLimiterSchema = message({
  resources: repeated(message({ name: string(), global: bool(), count: num(uint32()) })),
  priority: num(uint32()),
});

export const InstanceGroupSchema = message({
  name: string(),
  kind: enumField(INSTANCE_GROUP_KINDS),
  count: num(int32()),
  rate_limiter: RateLimiterSchema.optional(),
  gpus: repeated(int32()),
  secondary_devices: repeated(message({ kind: enumField(['KIND_NVDLA']), device_id: num(int64()) })),
  profile: repeated(z.string()),
  passive: bool(),
  host_policy: string(),
});

const ReshapeSchema = message({ shape: dims() });

const ModelInputSchema = message({
  name: string(),
  data_type: dataType(),
  format: enumField(['FORMAT_NONE', 'FORMAT_NHWC', 'FORMAT_NCHW']),
  dims: dims(),
  reshape: ReshapeSchema.optional(),
  is_shape_tensor: bool(),
  allow_ragged_batch: bool(),
  optional: bool(),
  is_non_linear_format_io: bool(),
});

const ModelOutputSchema = message({
  name: string(),
  data_type: dataType(),
  dims: dims(),
  reshape: ReshapeSchema.optional(),
  label_filename: string(),
  is_shape_tensor: bool(),
  is_non_linear_format_io: bool(),
});

const BatchInputSchema = message({
  kind: enumField(BATCH_INPUT_KINDS),
  target_name: repeated(z.string()),
  data_type: dataType(),
  source_input: repeated(z.string()),
});

const BatchOutputSchema = message({
  target_name: repeated(z.string()),
  kind: enumField(['BATCH_SCATTER_WITH_INPUT_SHAPE']),
  source_input: repeated(z.string()),
});

const VersionPolicySchema = message(
  {
    latest: message({ num_versions: num(uint32()) }).optional(),
    all: message({}).optional(),
    specific: message({ versions: repeated(int64()) }).optional(),
  },
  [['latest', 'all', 'specific']],
);

const CudaGraphShapeSchema = message({ dim: repeated(int64()) });
const AcceleratorSchema = message({ name: string(), parameters: stringMap(z.string()) });
const PinnedMemorySchema = message({ enable: bool() });

export const OptimizationSchema = message({
  graph: message({ level: num(int32()) }).optional(),
  priority: enumField(['PRIORITY_DEFAULT', 'PRIORITY_MAX', 'PRIORITY_MIN']),
  cuda: message({
    graphs: bool(),
    busy_wait_events: bool(),
    graph_spec: repeated(
      message({
        batch_size: num(int32()),
        input: stringMap(CudaGraphShapeSchema),
        graph_lower_bound: message({ batch_size: num(int32()), input: stringMap(CudaGraphShapeSchema) }).optional(),
      }),
    ),
    output_copy_stream: bool(),
  }).optional(),
  execution_accelerators: message({
    gpu_execution_accelerator: repeated(AcceleratorSchema),
    cpu_execution_accelerator: repeated(AcceleratorSchema),
  }).optional(),
  input_pinned_memory: PinnedMemorySchema.optional(),
  output_pinned_memory: PinnedMemorySchema.optional(),
  gather_kernel_buffer_threshold: num(uint32()),
  eager_batching: bool(),
});

const QueuePolicySchema = message({
  timeout_action: enumField(['REJECT', 'DELAY']),
  default_timeout_microseconds: num(uint64()),
  allow_timeout_override: bool(),
  max_queue_size: num(uint32()),
});

const DynamicBatchingSchema = message({
  preferred_batch_size: repeated(int32()),
  max_queue_delay_microseconds: num(uint64()),
  preserve_ordering: bool(),
  priority_levels: num(uint64()),
  default_priority_level: num(uint64()),
  // Triton reads the default policy whether or not it is written.
  default_queue_policy: QueuePolicySchema.prefault({}),
  priority_queue_policy: uint64Map(QueuePolicySchema),
});

const SequenceControlSchema = message({
  kind: enumField(SEQUENCE_CONTROL_KINDS),
  int32_false_true: repeated(int32()),
  fp32_false_true: repeated(floating('float')),
  bool_false_true: repeated(z.boolean()),
  data_type: dataType(),
});

const InitialStateSchema = message(
  {
    data_type: dataType(),
    dims: dims(),
    zero_data: z.boolean().optional(),
    data_file: z.string().optional(),
    name: string(),
  },
  [['zero_data', 'data_file']],
);

const SequenceStateSchema = message({
  input_name: string(),
  output_name: string(),
  data_type: dataType(),
  dims: dims(),
  initial_state: repeated(InitialStateSchema),
  use_same_buffer_for_input_output: bool(),
  use_growable_memory: bool(),
});

const SequenceBatchingSchema = message(
  {
    direct: message({
      max_queue_delay_microseconds: num(uint64()),
      minimum_slot_utilization: num(floating('float')),
    }).optional(),
    oldest: message({
      max_candidate_sequences: num(int32()),
      preferred_batch_size: repeated(int32()),
      max_queue_delay_microseconds: num(uint64()),
      preserve_ordering: bool(),
    }).optional(),
    max_sequence_idle_microseconds: num(uint64()),
    control_input: repeated(message({ name: string(), control: repeated(SequenceControlSchema) })),
    state: repeated(SequenceStateSchema),
    iterative_sequence: bool(),
  },
  [['direct', 'oldest']],
);

const EnsembleStepSchema = message({
  model_name: string(),
  model_version: num(int64()),
  input_map: stringMap(z.string()),
  output_map: stringMap(z.string()),
  model_namespace: string(),
});

const EnsembleSchedulingSchema = message({
  step: repeated(EnsembleStepSchema),
  max_inflight_requests: num(uint32()),
});

const WarmupInputSchema = message(
  {
    data_type: dataType(),
    dims: dims(),
    zero_data: z.boolean().optional(),
    random_data: z.boolean().optional(),
    input_data_file: z.string().optional(),
  },
  [['zero_data', 'random_data', 'input_data_file']],
);

const ModelWarmupSchema = message({
  name: string(),
  batch_size: num(uint32()),
  inputs: stringMap(WarmupInputSchema),
  count: num(uint32()),
});

const MetricControlSchema = message(
  {
    metric_identifier: message({ family: string() }).optional(),
    histogram_options: message({ buckets: repeated(floating('double')) }).optional(),
  },
  [['histogram_options']],
);

export const ModelConfigSchema = message(
  {
    name: string(),
    platform: string(),
    backend: string(),
    runtime: string(),
    version_policy: VersionPolicySchema.optional(),
    max_batch_size: num(int32()),
    input: repeated(ModelInputSchema),
    output: repeated(ModelOutputSchema),
    batch_input: repeated(BatchInputSchema),
    batch_output: repeated(BatchOutputSchema),
    optimization: OptimizationSchema.optional(),
    dynamic_batching: DynamicBatchingSchema.optional(),
    sequence_batching: SequenceBatchingSchema.optional(),
    ensemble_scheduling: EnsembleSchedulingSchema.optional(),
    instance_group: repeated(InstanceGroupSchema),
    default_model_filename: string(),
    cc_model_filenames: stringMap(z.string()),
    metric_tags: stringMap(z.string()),
    parameters: stringMap(message({ string_value: string() })),
    model_warmup: repeated(ModelWarmupSchema),
    model_operations: message({ op_library_filename: repeated(z.string()) }).optional(),
    // Read by schedulers and the cache whether or not they are written.
    model_transaction_policy: message({ decoupled: bool() }).prefault({}),
    model_repository_agents: message({
      agents: repeated(message({ name: string(), parameters: stringMap(z.string()) })),
    }).optional(),
    response_cache: message({ enable: bool() }).prefault({}),
    model_metrics: message({ metric_control: repeated(MetricControlSchema) }).optional(),
  },
  [['dynamic_batching', 'sequence_batching', 'ensemble_scheduling']],
);

/** A model configuration as written (config.pbtxt or a user object): every field optional. */
export type ModelConfig = z.input<typeof ModelConfigSchema>;
/** A model configuration after normalization: proto3 defaults and Triton's defaults filled in. */
export type NormalizedModelConfig = z.output<typeof ModelConfigSchema>;

export type DataTypeName = (typeof DATA_TYPES)[number];
export type InstanceGroupKind = (typeof INSTANCE_GROUP_KINDS)[number];
export type SequenceControlKind = (typeof SEQUENCE_CONTROL_KINDS)[number];

export type ModelInput = z.input<typeof ModelInputSchema>;
export type ModelOutput = z.input<typeof ModelOutputSchema>;
export type InstanceGroup = z.input<typeof InstanceGroupSchema>;
export type VersionPolicy = z.input<typeof VersionPolicySchema>;
export type DynamicBatching = z.input<typeof DynamicBatchingSchema>;
export type QueuePolicy = z.input<typeof QueuePolicySchema>;
export type SequenceBatching = z.input<typeof SequenceBatchingSchema>;
export type EnsembleScheduling = z.input<typeof EnsembleSchedulingSchema>;
export type ModelWarmup = z.input<typeof ModelWarmupSchema>;

export type NormalizedModelInput = z.output<typeof ModelInputSchema>;
export type NormalizedModelOutput = z.output<typeof ModelOutputSchema>;
export type NormalizedInstanceGroup = z.output<typeof InstanceGroupSchema>;
export type NormalizedDynamicBatching = z.output<typeof DynamicBatchingSchema>;
export type NormalizedQueuePolicy = z.output<typeof QueuePolicySchema>;
export type NormalizedSequenceBatching = z.output<typeof SequenceBatchingSchema>;
export type NormalizedEnsembleScheduling = z.output<typeof EnsembleSchedulingSchema>;
