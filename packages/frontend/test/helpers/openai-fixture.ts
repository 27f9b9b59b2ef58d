import { InferenceServer, type Backend } from '@tritium/core';
import { startOpenAIFrontend, type OpenAIFrontendOptions, type RunningFrontend } from '@tritium/frontend';
import { TempRepository, type TestModel } from '../../../core/test/helpers/repository.js';
import { testBackend } from '../../../core/test/helpers/test-backend.js';
import { WORD_LLM_CONFIG, wordLlmBackend, type WordLlmProbe } from './word-llm-backend.js';

/** A server on a temporary repository, served by the OpenAI frontend on 127.0.0.1 (any free port). */
export interface OpenAIFixture {
  readonly server: InferenceServer;
  readonly frontend: RunningFrontend;
  readonly repository: TempRepository;
  /** `http://127.0.0.1:<port>/v1`, the base URL OpenAI's clients take. */
  readonly baseURL: string;
  /** What the word model's backend saw. */
  readonly words: WordLlmProbe;
  stop(): Promise<void>;
}

/** A chat template a test can predict: each message as `<role>: <content>` on its line, then `assistant:`. */
export const LINE_CHAT_TEMPLATE = '{% for m in messages %}{{ m.role }}: {{ m.content }}\\n{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}';

/** The word model (word-llm-backend.ts) with LINE_CHAT_TEMPLATE as its `chat_template` parameter. */
export const wordModel: TestModel = { config: `${WORD_LLM_CONFIG}parameters { key: "chat_template" value { string_value: "${LINE_CHAT_TEMPLATE}" } }\n` };

export async function startOpenAIFixture(
  models: Record<string, TestModel>,
  options: { readonly backends?: readonly Backend[]; readonly frontend?: OpenAIFrontendOptions; readonly prepare?: (repository: TempRepository) => Promise<void> } = {},
): Promise<OpenAIFixture> {
  const repository = await TempRepository.create(models);
  await options.prepare?.(repository);
  const words: WordLlmProbe = { cancelled: 0 };
  const server = await InferenceServer.start({ modelRepository: repository.path, backends: [testBackend(), wordLlmBackend(words), ...(options.backends ?? [])] });
  const frontend = await startOpenAIFrontend(server, { host: '127.0.0.1', port: 0, modelRepository: repository.path, ...options.frontend });
  return {
    server,
    frontend,
    repository,
    words,
    baseURL: `http://127.0.0.1:${frontend.port}/v1`,
    async stop() {
      await frontend.close();
      await server.stop();
      await repository.remove();
    },
  };
}
