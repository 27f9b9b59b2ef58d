/**
 * Streams a chat completion with OpenAI's npm client from a llama.cpp model served
 * in-process, through Tritium's OpenAI-compatible frontend (docs/openai.md).
 * Run: npx -y pnpm@10.34.9 example:openai-chat
 *
 * The model is a tiny Llama-architecture GGUF with random weights, written here (it needs
 * python3 with the gguf package): its words are noise, the wiring is the point. Put a real
 * GGUF at <model>/1/model.gguf to hear something sensible.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { InferenceServer } from '@tritium/core';
import { startOpenAIFrontend } from '@tritium/frontend';
import { makeTinyLlamaModel, tinyGgufUnavailable } from '../../packages/backend-llamacpp/models/tiny-llama.js';

const missing = await tinyGgufUnavailable();
if (missing) {
  console.error(`examples/openai-chat writes its model first: ${missing}`);
  process.exit(1);
}

// A repository with one llama.cpp model: tiny/1/model.gguf, its model.json, and a config saying `backend: "llamacpp"`.
const repository = await mkdtemp(join(tmpdir(), 'tritium-openai-'));
await makeTinyLlamaModel(repository, { name: 'tiny' });

const server = await InferenceServer.start({ modelRepository: repository });
// modelRepository: where the frontend reads a model's chat template (here, from the GGUF's metadata).
const frontend = await startOpenAIFrontend(server, { host: '127.0.0.1', port: 0, modelRepository: repository });
try {
  const client = new OpenAI({ baseURL: `http://127.0.0.1:${frontend.port}/v1`, apiKey: 'not-needed' });
  console.log(`models: ${(await client.models.list()).data.map((model) => model.id).join(', ')}`);

  const stream = await client.chat.completions.create({
    model: 'tiny',
    messages: [
      { role: 'system', content: 'You are a helpful assistant.' },
      { role: 'user', content: 'Tell me about Tritium.' },
    ],
    max_tokens: 16,
    temperature: 0,
    stream: true,
    stream_options: { include_usage: true },
  });
  let chunks = 0;
  let finishReason: string | null = null;
  let usage: OpenAI.CompletionUsage | null | undefined;
  process.stdout.write('assistant:');
  for await (const chunk of stream) {
    const choice = chunk.choices[0];
    if (choice?.delta.content) {
      chunks++;
      process.stdout.write(choice.delta.content);
    }
    finishReason = choice?.finish_reason ?? finishReason;
    usage = chunk.usage ?? usage;
  }
  console.log(`\nstreamed ${chunks} chunks, finish_reason ${finishReason}, usage: ${usage?.prompt_tokens} prompt + ${usage?.completion_tokens} completion tokens`);
} finally {
  await frontend.close();
  await server.stop();
  await rm(repository, { recursive: true, force: true });
}
