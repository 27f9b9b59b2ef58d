import { chatMessages } from './chat-messages.js';
import { answerChoices, type ChoiceFormat } from './generation-answer.js';
import { GenerationModel } from './generation-model.js';
import { chatLogprobs } from './logprobs.js';
import type { OpenAIHandler } from './openai-context.js';
import { invalidField } from './openai-error.js';
import { startRequest } from './request-start.js';
import { samplingRequest } from './sampling-fields.js';

/** `POST /v1/chat/completions`: the messages rendered with the model's chat template, then generated as a completion. */
export const chatCompletions: OpenAIHandler = async (context, req, res) => {
  const { fields, signal } = await startRequest(context, req, res);
  const modelName = fields.requiredString('model');
  const messages = chatMessages(fields.raw('messages'));
  const logprobs = fields.boolean('logprobs') ?? false;
  const topLogprobs = fields.integer('top_logprobs', 0, 20);
  if (topLogprobs !== undefined && !logprobs) throw invalidField('top_logprobs', '`top_logprobs` can only be used when `logprobs` is true');
  // max_completion_tokens replaces max_tokens, which OpenAI keeps for older clients.
  const maxTokens = fields.integer('max_completion_tokens', 0, Number.MAX_SAFE_INTEGER) ?? fields.integer('max_tokens', 0, Number.MAX_SAFE_INTEGER);
  const sampling = samplingRequest(fields, maxTokens ?? context.defaultMaxTokens);
  fields.refuseOthers();
  const catalogModel = await context.catalog.model(modelName);
  const model = new GenerationModel(catalogModel);
  if (logprobs) model.checkLogprobs('logprobs');
  const prompt = (await context.catalog.chatPrompt(catalogModel)).render(messages);
  // vLLM counts the chosen token among its `logprobs`: top_logprobs 0 still asks for 1, as Triton's frontend does.
  const samplingParameters = logprobs ? { ...sampling.samplingParameters, logprobs: Math.max(topLogprobs ?? 1, 1) } : sampling.samplingParameters;
  await answerChoices(context, res, signal, model, sampling, { prompt, samplingParameters, echo: false, logprobs }, CHAT_FORMAT);
};

const CHAT_FORMAT: ChoiceFormat = {
  object: 'chat.completion',
  chunkObject: 'chat.completion.chunk',
  idPrefix: 'chatcmpl',
  whole: ({ text, logprobs, finishReason }) => ({
    message: { role: 'assistant', content: text },
    logprobs: logprobs.length > 0 ? chatLogprobs(logprobs) : null,
    finish_reason: finishReason,
  }),
  opening: () => ({ delta: { role: 'assistant', content: '' } }),
  delta: ({ text, logprobs }) => ({ delta: { content: text }, logprobs: logprobs ? chatLogprobs(logprobs) : null }),
  ending: () => ({ delta: {} }),
};
