import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JSON_EMBEDDING_CONFIG, jsonEmbeddingBackend } from './helpers/json-embedding-backend.js';
import { startOpenAIFixture, type OpenAIFixture } from './helpers/openai-fixture.js';
import { pythonModulesMissing } from './helpers/python-modules.js';
import { WORDPIECE_TOKENIZER, WORDPIECE_VOCAB } from './helpers/wordpiece-tokenizer.js';

const onnxMissing = pythonModulesMissing('onnx', 'numpy');
const MAKE_MODEL = fileURLToPath(new URL('./helpers/make-embedding-onnx.py', import.meta.url));

/** The model's embedding table: one row of 4 per vocabulary entry, values a test can recompute. */
const DIM = 4;
const TABLE = WORDPIECE_VOCAB.map((_, id) => Array.from({ length: DIM }, (_, j) => Math.fround(Math.sin(id * DIM + j))));

/** What the model computes: the mean of the ids' rows. */
function meanOf(ids: number[]): number[] {
  return Array.from({ length: DIM }, (_, j) => Math.fround(ids.reduce((sum, id) => sum + TABLE[id]![j]!, 0) / ids.length));
}

const ids = (...tokens: string[]) => tokens.map((token) => WORDPIECE_VOCAB.indexOf(token));

let fx: OpenAIFixture;
let client: OpenAI;
beforeAll(async () => {
  if (onnxMissing) return;
  fx = await startOpenAIFixture(
    {
      embedder: {
        config: `platform: "onnxruntime_onnx"
max_batch_size: 2
input { name: "input_ids" data_type: TYPE_INT64 dims: [ -1 ] }
input { name: "attention_mask" data_type: TYPE_INT64 dims: [ -1 ] }
output { name: "sentence_embedding" data_type: TYPE_FP32 dims: [ ${DIM} ] }
`,
        versions: {},
      },
    },
    {
      prepare: async (repository) => {
        const version = join(repository.path, 'embedder', '1');
        await mkdir(version, { recursive: true });
        execFileSync('python3', [MAKE_MODEL, join(version, 'model.onnx'), JSON.stringify(TABLE)]);
        await writeFile(join(repository.path, 'embedder', 'tokenizer.json'), JSON.stringify(WORDPIECE_TOKENIZER));
      },
    },
  );
  client = new OpenAI({ baseURL: fx.baseURL, apiKey: 'unused', maxRetries: 0 });
});
afterAll(() => fx?.stop());

describe.skipIf(onnxMissing)('OpenAI embeddings from an ONNX sentence-embedding model', () => {
  it('tokenizes with the model tokenizer.json and returns the pooled vector of each input, in order, across batches', async () => {
    const inputs = ['The cat sat', 'dogs', 'a cat on the mat'];
    const response = await client.embeddings.create({ model: 'embedder', input: inputs, encoding_format: 'float' });
    const expected = [ids('[CLS]', 'the', 'cat', 'sat', '[SEP]'), ids('[CLS]', 'dog', '##s', '[SEP]'), ids('[CLS]', 'a', 'cat', 'on', 'the', 'mat', '[SEP]')];
    expect(response.object).toBe('list');
    expect(response.model).toBe('embedder');
    expect(response.data.map((item) => item.index)).toEqual([0, 1, 2]);
    for (const [index, item] of response.data.entries()) {
      expect(item.object).toBe('embedding');
      item.embedding.forEach((value, j) => expect(value).toBeCloseTo(meanOf(expected[index]!)[j]!, 6));
    }
    expect(response.usage).toEqual({ prompt_tokens: 16, total_tokens: 16 });
  });

  it('takes token ids as they are, and answers base64 float32 when asked', async () => {
    const tokenIds = ids('[CLS]', 'mat', '[SEP]');
    const res = await fetch(`${fx.baseURL}/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'embedder', input: tokenIds, encoding_format: 'base64' }),
    });
    const body = (await res.json()) as { data: Array<{ embedding: string }> };
    const vector = Array.from(new Float32Array(Uint8Array.from(Buffer.from(body.data[0]!.embedding, 'base64')).buffer));
    vector.forEach((value, j) => expect(value).toBeCloseTo(meanOf(tokenIds)[j]!, 6));
    // The npm client asks for base64 by default and decodes it.
    const decoded = await client.embeddings.create({ model: 'embedder', input: 'the mat' });
    decoded.data[0]!.embedding.forEach((value, j) => expect(value).toBeCloseTo(meanOf(ids('[CLS]', 'the', 'mat', '[SEP]'))[j]!, 6));
  });

  it('refuses what it cannot embed, naming the field', async () => {
    const dimensions = await client.embeddings.create({ model: 'embedder', input: 'a', dimensions: 2 }).catch((e: unknown) => e);
    expect(dimensions).toMatchObject({ status: 400, param: 'dimensions' });
    const empty = await client.embeddings.create({ model: 'embedder', input: [] }).catch((e: unknown) => e);
    expect(empty).toMatchObject({ status: 400, param: 'input' });
  });
});

describe("OpenAI embeddings from a model on Triton's vLLM embedding convention", () => {
  let json: OpenAIFixture;
  beforeAll(async () => {
    json = await startOpenAIFixture({ vectors: { config: JSON_EMBEDDING_CONFIG } }, { backends: [jsonEmbeddingBackend()] });
  });
  afterAll(() => json.stop());

  it('sends each input as an embedding_request, passing dimensions as Triton does, and reads the JSON vector and token count', async () => {
    const jsonClient = new OpenAI({ baseURL: json.baseURL, apiKey: 'unused', maxRetries: 0 });
    const response = await jsonClient.embeddings.create({ model: 'vectors', input: ['one two', 'three'], dimensions: 3, encoding_format: 'float' });
    expect(response.data.map((item) => item.embedding)).toEqual([
      [7, 2, 3],
      [5, 1, 3],
    ]);
    expect(response.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
    const ids = await jsonClient.embeddings.create({ model: 'vectors', input: [1, 2, 3] }).catch((e: unknown) => e);
    expect(ids).toMatchObject({ status: 400, param: 'input' });
  });
});
