import { mkdtemp, mkdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestModel {
  /** config.pbtxt text; omitted to test auto-complete. */
  config?: string;
  /** Version number → model file content (JSON for the test backend). */
  versions?: Record<number, string>;
}

/** A model repository in a temp directory; call `remove()` when done. */
export class TempRepository {
  private constructor(readonly path: string) {}

  static async create(models: Record<string, TestModel> = {}): Promise<TempRepository> {
    const repository = new TempRepository(await mkdtemp(join(tmpdir(), 'tritium-test-')));
    for (const [name, model] of Object.entries(models)) await repository.write(name, model);
    return repository;
  }

  async write(name: string, model: TestModel): Promise<void> {
    const dir = join(this.path, name);
    await mkdir(dir, { recursive: true });
    if (model.config !== undefined) await writeFile(join(dir, 'config.pbtxt'), model.config);
    for (const [version, content] of Object.entries(model.versions ?? { 1: '' })) {
      await mkdir(join(dir, version), { recursive: true });
      await writeFile(join(dir, version, 'model.test'), content);
    }
  }

  /** Moves a file's modification time 5 s ahead, so a poll sees it changed however coarse the file system's clock. */
  async touch(relativePath: string): Promise<void> {
    const later = new Date(Date.now() + 5_000);
    await utimes(join(this.path, relativePath), later, later);
  }

  async removeModel(name: string): Promise<void> {
    await rm(join(this.path, name), { recursive: true, force: true });
  }

  async remove(): Promise<void> {
    await rm(this.path, { recursive: true, force: true });
  }
}

/** config.pbtxt for an FP32 identity/add model on the test backend. */
export function testConfig(options: {
  name?: string;
  behavior?: string;
  maxBatchSize?: number;
  dims?: number[];
  inputs?: number;
  count?: number;
  extra?: string;
}): string {
  const dims = `[ ${(options.dims ?? [4]).join(', ')} ]`;
  const inputs = Array.from({ length: options.inputs ?? 1 }, (_, i) =>
    `input { name: "INPUT${i}" data_type: TYPE_FP32 dims: ${dims} }`).join('\n');
  const outputs = Array.from({ length: options.behavior === 'add' ? 1 : options.inputs ?? 1 }, (_, i) =>
    `output { name: "OUTPUT${i}" data_type: TYPE_FP32 dims: ${dims} }`).join('\n');
  return `${options.name ? `name: "${options.name}"\n` : ''}backend: "test"
max_batch_size: ${options.maxBatchSize ?? 0}
${inputs}
${outputs}
instance_group { count: ${options.count ?? 1} kind: KIND_CPU }
parameters { key: "behavior" value { string_value: "${options.behavior ?? 'identity'}" } }
${options.extra ?? ''}
`;
}

/** An ensemble of two steps, `first` then `second` (testConfig models named so): A → first → X → second → OUT, FP32 [4]. */
export const TWO_STEP_ENSEMBLE = `platform: "ensemble"
input { name: "A" data_type: TYPE_FP32 dims: [ 4 ] }
output { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] }
ensemble_scheduling {
  step { model_name: "first" model_version: -1 input_map { key: "INPUT0" value: "A" } output_map { key: "OUTPUT0" value: "X" } }
  step { model_name: "second" model_version: -1 input_map { key: "INPUT0" value: "X" } output_map { key: "OUTPUT0" value: "OUT" } }
}`;
