import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { pythonMissing } from '../../backend-python/test/helpers.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MAIN = 'packages/frontend/src/cli/main.ts';
const TOKENS = 12;

/** A decoupled Python model on Triton's LLM tensors: the prompt's words, upper-cased, one every 50 ms. */
const SLOW_WORDS_PY = `import json, time
import numpy as np
import triton_python_backend_utils as pb_utils

class TritonPythonModel:
    def execute(self, requests):
        for request in requests:
            sender = request.get_response_sender()
            words = pb_utils.get_input_tensor_by_name(request, "text_input").as_numpy()[0].decode().upper().split()
            count = json.loads(pb_utils.get_input_tensor_by_name(request, "sampling_parameters").as_numpy()[0])["max_tokens"]
            for i in range(count):
                time.sleep(0.05)
                text = pb_utils.Tensor("text_output", np.array([(" " + words[i % len(words)]).encode()], dtype=np.object_))
                sender.send(pb_utils.InferenceResponse([text]), flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL if i == count - 1 else 0)
        return None
`;

const SLOW_WORDS_CONFIG = `backend: "python"
max_batch_size: 0
model_transaction_policy { decoupled: true }
input { name: "text_input" data_type: TYPE_STRING dims: [ 1 ] }
input { name: "stream" data_type: TYPE_BOOL dims: [ 1 ] optional: true }
input { name: "sampling_parameters" data_type: TYPE_STRING dims: [ 1 ] optional: true }
output { name: "text_output" data_type: TYPE_STRING dims: [ -1 ] }
`;

let repository: string;
let child: ChildProcess | undefined;
beforeAll(async () => {
  repository = await mkdtemp(join(tmpdir(), 'tritium-openai-cli-'));
  await mkdir(join(repository, 'words', '1'), { recursive: true });
  await writeFile(join(repository, 'words', 'config.pbtxt'), SLOW_WORDS_CONFIG);
  await writeFile(join(repository, 'words', '1', 'model.py'), SLOW_WORDS_PY);
  await writeFile(join(repository, 'template.jinja'), '{% for m in messages %}{{ m.content }} {% endfor %}');
});
afterEach(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  if (child && child.exitCode === null && child.signalCode === null) await once(child, 'exit');
  child = undefined;
});
afterAll(() => rm(repository, { recursive: true, force: true }));

describe.skipIf(pythonMissing)('tritium serve --openai-port', () => {
  it('serves OpenAI clients, and on SIGTERM lets a stream in flight finish before it exits 0', async () => {
    const args = ['serve', `--model-repository=${repository}`, '--allow-grpc=false', '--allow-metrics=false', '--http-address=127.0.0.1', '--http-port=0', '--openai-port=0'];
    child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args, `--openai-chat-template=${join(repository, 'template.jinja')}`], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    for (const stream of [child.stdout!, child.stderr!]) stream.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = once(child, 'exit');
    await expect.poll(() => /Started OpenAI frontend at 127\.0\.0\.1:(\d+)/.exec(output), { timeout: 60_000, interval: 50 }).not.toBeNull();
    const port = /Started OpenAI frontend at 127\.0\.0\.1:(\d+)/.exec(output)![1];
    const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'unused', maxRetries: 0 });
    expect((await client.models.list()).data.map((model) => model.id)).toEqual(['words']);
    // The template file given on the command line renders the chat.
    const chat = await client.chat.completions.create({ model: 'words', messages: [{ role: 'user', content: 'hi there' }], max_tokens: 2 });
    expect(chat.choices[0]!.message.content).toBe(' HI THERE');

    const stream = await client.completions.create({ model: 'words', prompt: 'a b', max_tokens: TOKENS, stream: true });
    const texts: string[] = [];
    for await (const chunk of stream) {
      texts.push(chunk.choices[0]!.text);
      // One token in, the command is told to stop: the rest of the stream still comes.
      if (texts.length === 1) child.kill('SIGTERM');
    }
    expect(texts.join('')).toBe(' A B'.repeat(TOKENS / 2));
    expect(texts.length).toBe(TOKENS + 1);
    expect(await exited).toEqual([0, null]);
  }, 90_000);
});
