import { testConfig, type TestModel } from '../../../core/test/helpers/repository.js';

/** FP32 [4] INPUT0 -> OUTPUT0, two instances. */
export const SIMPLE: TestModel = { config: testConfig({ count: 2 }) };

/** Decoupled: sends IN (INT32 [1]) back as OUT `count` times (request parameter), then the final flag. */
export const REPEAT: TestModel = {
  config: `backend: "test"
input { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] }
output { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] }
instance_group { count: 2 kind: KIND_CPU }
model_transaction_policy { decoupled: true }
parameters { key: "behavior" value { string_value: "repeat" } }`,
};

/** A sequence model: OUTPUT0 = INPUT0 (FP32 [1, 1]) + the sequence's running sum, kept as implicit state. */
export const ACCUMULATE: TestModel = {
  config: testConfig({
    behavior: 'accumulate',
    maxBatchSize: 4,
    dims: [1],
    extra: `sequence_batching { max_sequence_idle_microseconds: 5000000
      state { input_name: "STATE_IN" output_name: "STATE_OUT" data_type: TYPE_FP32 dims: [ 1 ]
        initial_state { data_type: TYPE_FP32 dims: [ 1 ] zero_data: true name: "initial" } } }`,
  }),
};
