import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

export interface ReferenceCase {
  readonly name: string;
  readonly rows: number;
  readonly features: number;
  /** Values per row of the reference predictions. */
  readonly width: number;
  /** The first model file, as text. */
  readonly modelText: string;
  /** Each model file by name. */
  readonly files: Readonly<Record<string, Buffer>>;
  readonly x: Float32Array;
  readonly expected: Float64Array;
}

/**
 * Models with reference predictions, written by one of this directory's Python scripts
 * (`lightgbm_models.py`: trained by the real lightgbm; `xgboost_models.py`: random
 * XGBoost forests in JSON, UBJSON and legacy binary form, with an independent
 * evaluator); or the reason they
 * cannot be had, for the tests to skip with.
 */
export async function referenceCases(script: string, modelFiles: readonly string[], needs: string): Promise<{ cases: ReferenceCase[] } | { missing: string }> {
  const directory = await mkdtemp(join(tmpdir(), 'tritium-fil-'));
  try {
    const scriptPath = fileURLToPath(new URL(`./${script}`, import.meta.url));
    try {
      await promisify(execFile)('python3', [scriptPath, directory], { timeout: 60_000 });
    } catch (error) {
      return { missing: `${needs} is needed for reference predictions: ${(error as Error).message.split('\n').slice(-3).join(' ')}` };
    }
    const cases = JSON.parse(await readFile(join(directory, 'cases.json'), 'utf8')) as Array<Omit<ReferenceCase, 'modelText' | 'files' | 'x' | 'expected'>>;
    return {
      cases: await Promise.all(cases.map(async (c) => {
        const read = (file: string) => readFile(join(directory, c.name, file));
        const x = await read('x.f32');
        const expected = await read('expected.f64');
        const files = Object.fromEntries(await Promise.all(modelFiles.map(async (file) => [file, await read(file)] as const)));
        return {
          ...c,
          modelText: files[modelFiles[0]!]!.toString('utf8'),
          files,
          x: new Float32Array(x.buffer, x.byteOffset, x.byteLength / 4),
          expected: new Float64Array(expected.buffer.slice(expected.byteOffset, expected.byteOffset + expected.byteLength)),
        };
      })),
    };
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

/** The largest difference between two arrays, relative to the larger magnitude (at least 1). */
export function maxRelativeError(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
  let worst = 0;
  for (let i = 0; i < expected.length; i++) {
    worst = Math.max(worst, Math.abs(actual[i]! - expected[i]!) / Math.max(1, Math.abs(expected[i]!)));
  }
  return worst;
}

/** A FIL config.pbtxt as Triton users write it. */
export function filConfig(options: { name: string; modelType?: string; features: number; outputWidth: number; maxBatchSize?: number; parameters?: Record<string, string>; extra?: string }): string {
  const parameters = { ...(options.modelType === undefined ? {} : { model_type: options.modelType }), ...options.parameters };
  return `name: "${options.name}"
backend: "fil"
max_batch_size: ${options.maxBatchSize ?? 1024}
input [ { name: "input__0" data_type: TYPE_FP32 dims: [ ${options.features} ] } ]
output [ { name: "output__0" data_type: TYPE_FP32 dims: [ ${options.outputWidth} ] } ]
instance_group [ { kind: KIND_CPU } ]
${Object.entries(parameters).map(([key, value]) => `parameters { key: "${key}" value { string_value: "${value}" } }`).join('\n')}
${options.extra ?? ''}
`;
}
