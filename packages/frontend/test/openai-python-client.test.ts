import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JSON_EMBEDDING_CONFIG, jsonEmbeddingBackend } from './helpers/json-embedding-backend.js';
import { startOpenAIFixture, wordModel, type OpenAIFixture } from './helpers/openai-fixture.js';
import { pythonModulesMissing } from './helpers/python-modules.js';
import { wordLlmTokens } from './helpers/word-llm-backend.js';

const clientMissing = pythonModulesMissing('openai');
const SCRIPT = fileURLToPath(new URL('./helpers/openai-python-client.py', import.meta.url));

let fx: OpenAIFixture;
beforeAll(async () => {
  if (clientMissing) return;
  fx = await startOpenAIFixture({ words: wordModel, vectors: { config: JSON_EMBEDDING_CONFIG } }, { backends: [jsonEmbeddingBackend()] });
});
afterAll(() => fx?.stop());

describe.skipIf(clientMissing)("OpenAI frontend with OpenAI's Python client", () => {
  it('completes, streams a chat, answers n choices, embeds, and raises the client errors for 404 and 400', async () => {
    const { stdout } = await promisify(execFile)('python3', [SCRIPT, fx.baseURL], { timeout: 60_000 });
    expect(JSON.parse(stdout)).toEqual({
      completion: { text: ' ONE TWO THREE ONE TWO', finish_reason: 'length', usage: expect.objectContaining({ prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 }) },
      chat_stream: {
        content: wordLlmTokens('user: hello there\nassistant:', 4).join(''),
        finish_reasons: ['length'],
        usage: expect.objectContaining({ prompt_tokens: 4, completion_tokens: 4, total_tokens: 8 }),
      },
      chat: [' USER: HI', ' USER: HI'],
      embeddings: [
        [7, 2, 0],
        [5, 1, 0],
      ],
      not_found: { status: 404, code: 'model_not_found', param: 'model' },
      bad_request: { status: 400, param: 'temperature', type: 'invalid_request_error' },
    });
  });
});
