import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/** The shape of the tiny model; the same options write the same file. */
export interface TinyGgufOptions {
  readonly seed?: number;
  readonly embedding?: number;
  readonly layers?: number;
  readonly heads?: number;
  /** The context length the GGUF says it was trained on. */
  readonly trainedContext?: number;
  /** Store the matrices as F16 rather than F32 (llama.cpp's CPU batches F16 matrices better). */
  readonly f16?: boolean;
}

export interface TinyLlamaModelOptions extends TinyGgufOptions {
  /** The model's directory name in the repository. Default 'tiny_llama'. */
  readonly name?: string;
  /** model.json's engine settings beside `model`. Default: 512 tokens a sequence, 8 parallel sequences, 1 thread (a tiny model gains nothing from more, and llama.cpp's threads wait on each other badly on a busy shared machine). */
  readonly engine?: { readonly context_size?: number; readonly parallel?: number; readonly threads?: number; readonly batch_size?: number };
  /** Write a config.pbtxt with `backend: "llamacpp"` only (the rest auto-completes). Default true. */
  readonly config?: boolean;
}

const SCRIPT = fileURLToPath(new URL('./make-tiny-gguf.py', import.meta.url));
const run = promisify(execFile);

/**
 * Why tiny models cannot be made here (python3 or its gguf package is missing), or
 * undefined when they can: tests skip with this reason, the bench and example print it.
 */
export async function tinyGgufUnavailable(): Promise<string | undefined> {
  try {
    await run('python3', ['-c', 'import gguf, numpy'], { timeout: 30_000 });
    return undefined;
  } catch (error) {
    return `python3 with the gguf package is needed to write tiny GGUF models (pip install gguf): ${(error as Error).message.split('\n')[0]}`;
  }
}

/** Writes a tiny Llama-architecture GGUF with random weights, a small SentencePiece vocabulary and a chat template (make-tiny-gguf.py). */
export async function writeTinyGguf(path: string, options: TinyGgufOptions = {}): Promise<void> {
  const args = [SCRIPT, path, '--seed', String(options.seed ?? 7)];
  if (options.embedding) args.push('--embedding', String(options.embedding));
  if (options.layers) args.push('--layers', String(options.layers));
  if (options.heads) args.push('--heads', String(options.heads));
  if (options.trainedContext) args.push('--context', String(options.trainedContext));
  if (options.f16) args.push('--f16');
  await run('python3', args, { timeout: 120_000 });
}

/**
 * Makes a llamacpp model in repository `dir`: `<name>/1/model.gguf`, `<name>/1/model.json`
 * and (unless `config: false`) `<name>/config.pbtxt` saying `backend: "llamacpp"`.
 * Returns the model's directory.
 */
export async function makeTinyLlamaModel(dir: string, options: TinyLlamaModelOptions = {}): Promise<string> {
  const modelDirectory = join(dir, options.name ?? 'tiny_llama');
  const versionDirectory = join(modelDirectory, '1');
  await mkdir(versionDirectory, { recursive: true });
  await writeTinyGguf(join(versionDirectory, 'model.gguf'), options);
  const engine = { context_size: 512, parallel: 8, threads: 1, ...options.engine };
  await writeFile(join(versionDirectory, 'model.json'), JSON.stringify({ model: 'model.gguf', ...engine }, null, 2));
  if (options.config ?? true) await writeFile(join(modelDirectory, 'config.pbtxt'), 'backend: "llamacpp"\n');
  return modelDirectory;
}
