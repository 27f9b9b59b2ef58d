import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DATA_TYPES, dataTypeToConfig, type Backend, type DataType } from '@tritium/core';
import { testConfig, type TempRepository, type TestModel } from '../../../core/test/helpers/repository.js';
import { executeBackend } from './execute-backend.js';

/** The models the HTTP tests serve, on core's test backend unless said otherwise. */

/** Identity on every datatype: OUTPUT_<T> = INPUT_<T>, any length. */
export const allTypesModel: TestModel = {
  config: `backend: "test"
max_batch_size: 0
${DATA_TYPES.map((t) => `input { name: "INPUT_${t}" data_type: ${dataTypeToConfig(t)} dims: [ -1 ] optional: true }`).join('\n')}
${DATA_TYPES.map((t) => `output { name: "OUTPUT_${t}" data_type: ${dataTypeToConfig(t)} dims: [ -1 ] }`).join('\n')}
parameters { key: "behavior" value { string_value: "identity" } }`,
};

export const input = (type: DataType) => `INPUT_${type}`;
export const output = (type: DataType) => `OUTPUT_${type}`;

/** FP32 identity, INPUT0 -> OUTPUT0 of shape [4]. */
export const simpleModel: TestModel = { config: testConfig({}) };

/** OUTPUT0 = INPUT0 + INPUT1, FP32 [4]. */
export const addModel: TestModel = { config: testConfig({ behavior: 'add', inputs: 2 }) };

/** FP32 identity with batching (max_batch_size 8) and class labels on OUTPUT0, for classification. */
export const classifierModel: TestModel = {
  config: `backend: "test"
max_batch_size: 8
input { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] label_filename: "labels.txt" }
parameters { key: "behavior" value { string_value: "identity" } }`,
};

export const LABELS = ['cat', 'dog', 'bird', 'fish'];

export function writeLabels(model: string): (repository: TempRepository) => Promise<void> {
  return (repository) => writeFile(join(repository.path, model, 'labels.txt'), `${LABELS.join('\n')}\n`);
}

/** A sequence model with implicit state: OUTPUT0 = INPUT0 + the sequence's running sum. */
export const accumulateModel: TestModel = {
  config: testConfig({
    behavior: 'accumulate',
    maxBatchSize: 4,
    dims: [1],
    extra: `sequence_batching {
  max_sequence_idle_microseconds: 5000000
  control_input { name: "START" control { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } }
  control_input { name: "END" control { kind: CONTROL_SEQUENCE_END fp32_false_true: [ 0, 1 ] } }
  control_input { name: "READY" control { kind: CONTROL_SEQUENCE_READY bool_false_true: [ false, true ] } }
  control_input { name: "CORRID" control { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64 } }
  state { input_name: "STATE_IN" output_name: "STATE_OUT" data_type: TYPE_FP32 dims: [ 1 ]
    initial_state { data_type: TYPE_FP32 dims: [ 1 ] zero_data: true name: "initial" } }
}`,
  }),
};

/** Decoupled: sends IN back as OUT `count` times (request parameter), `interval_ms` apart. */
export const repeatModel: TestModel = {
  config: `backend: "test"
input { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] }
output { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] }
model_transaction_policy { decoupled: true }
parameters { key: "behavior" value { string_value: "repeat" } }`,
};

/** Text in, text out (identity), for the generate extension. */
export const textModel: TestModel = {
  config: `backend: "test"
max_batch_size: 4
input { name: "text_input" data_type: TYPE_STRING dims: [ 1 ] }
output { name: "text_output" data_type: TYPE_STRING dims: [ 1 ] }
parameters { key: "behavior" value { string_value: "identity" } }`,
};

/** Decoupled on the failing-stream backend: two responses (IN back as OUT), then an error. */
export const failingStreamModel: TestModel = {
  config: `backend: "failing_stream"
input { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] }
output { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] }
model_transaction_policy { decoupled: true }`,
};

export const STREAM_FAILURE = 'the stream broke after two responses';

/** A backend whose every request streams two responses and then fails. */
export function failingStreamBackend(): Backend {
  return executeBackend('failing_stream', async (requests) => {
    for (const request of requests) {
      request.response.send({ OUT: request.inputs.IN! });
      request.response.send({ OUT: request.inputs.IN! });
      request.response.fail(new Error(STREAM_FAILURE));
    }
  });
}
