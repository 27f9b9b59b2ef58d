import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const MODELS = fileURLToPath(new URL('../packages/backend-onnx/models/', import.meta.url));

/**
 * The config the frontend benchmarks serve the ONNX backend's test models with: FP32
 * INPUT0 → OUTPUT0 of `dims`. The tiny model runs inline (a worker hand-off would cost
 * more than the run), so what each path adds shows; one intra-op thread, so that
 * onnxruntime's spinning pool does not take the clients' core.
 */
export const onnxConfig = (dims: string, thread: 'inline' | 'worker') => `platform: "onnxruntime_onnx"
max_batch_size: 64
input { name: "INPUT0" data_type: TYPE_FP32 dims: [ ${dims} ] }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ ${dims} ] }
parameters { key: "execution_thread" value { string_value: "${thread}" } }
parameters { key: "intra_op_thread_count" value { string_value: "1" } }
`;

/** Copies one of packages/backend-onnx/models/ (`tiny.onnx`: OUTPUT0 = INPUT0 + 1) as `model`'s version 1 in `repository`. */
export async function copyOnnxModel(repository: string, model: string, file: string): Promise<void> {
  await copyFile(join(MODELS, file), join(repository, model, '1', 'model.onnx'));
}
