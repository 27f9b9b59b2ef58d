import { readFile } from 'node:fs/promises';
import { InferenceError, pathInside } from '@tritium/core/backend';

/** The engine a model.json asks for: the GGUF file and how llama.cpp runs it. */
export interface EngineSettings {
  /** The GGUF file, resolved inside the version directory. */
  readonly modelPath: string;
  /** Tokens each sequence can hold (prompt and output together). */
  readonly contextSize: number;
  /** Sequences decoded together: the most requests generating at once. */
  readonly parallel: number;
  /** CPU threads for decoding; 0: llama.cpp's choice (the cores useful for math). */
  readonly threads: number;
  /** The most tokens one decode step takes (prompts are split into steps of this size). */
  readonly batchSize: number;
}

/** The file in the version directory, as Triton's vLLM backend reads its engine arguments from `<model>/<version>/model.json`. */
export const ENGINE_SETTINGS_FILE = 'model.json';

const DEFAULTS = { context_size: 2048, parallel: 8, threads: 0, batch_size: 512 } as const;
const FIELDS = new Set(['model', ...Object.keys(DEFAULTS)]);

/** Reads and checks model.json; the error names the model, the file and the field at fault. */
export async function readEngineSettings(modelName: string, settingsPath: string, versionDirectory: string): Promise<EngineSettings> {
  const where = `model '${modelName}': ${settingsPath}`;
  let text: string;
  try {
    text = await readFile(settingsPath, 'utf8');
  } catch (error) {
    throw new InferenceError('UNAVAILABLE', `${where} cannot be read (${(error as Error).message}); it names the GGUF file and the engine settings`, { cause: error });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new InferenceError('INVALID_ARG', `${where} is not JSON: ${(error as Error).message}`, { cause: error });
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new InferenceError('INVALID_ARG', `${where} must hold a JSON object`);
  const fields = json as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if (!FIELDS.has(key)) throw new InferenceError('INVALID_ARG', `${where}: unknown field '${key}' (known: ${[...FIELDS].join(', ')})`);
  }
  if (typeof fields.model !== 'string' || fields.model === '') throw new InferenceError('INVALID_ARG', `${where}: 'model' must name the GGUF file, relative to the version directory`);
  const integer = (key: keyof typeof DEFAULTS, min: number): number => {
    const value = fields[key] ?? DEFAULTS[key];
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
      throw new InferenceError('INVALID_ARG', `${where}: '${key}' must be an integer >= ${min}, not ${JSON.stringify(value)}`);
    }
    return value;
  };
  return {
    modelPath: await pathInside(versionDirectory, fields.model, `${where}: 'model'`),
    contextSize: integer('context_size', 16),
    parallel: integer('parallel', 1),
    threads: integer('threads', 0),
    batchSize: integer('batch_size', 1),
  };
}
