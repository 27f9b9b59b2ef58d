import { completionLogprobs } from './logprobs.js';
import { answerChoices, type ChoiceFormat } from './generation-answer.js';
import { GenerationModel } from './generation-model.js';
import type { OpenAIHandler } from './openai-context.js';
import { invalidField, unsupportedField } from './openai-error.js';
import { describe } from './request-fields.js';
import { startRequest } from './request-start.js';
import { samplingRequest } from './sampling-fields.js';

/** `POST /v1/completions`: a prompt continued, mapped to the model as Triton's frontend maps it for vLLM. */
export const completions: OpenAIHandler = async (context, req, res) => {
  const { fields, signal } = await startRequest(context, req, res);
  const modelName = fields.requiredString('model');
  const prompt = fields.raw('prompt');
  // As Triton's frontend: one prompt, as text (not token ids, not a batch).
  if (Array.isArray(prompt)) throw unsupportedField('prompt', 'only a single string prompt is supported');
  if (typeof prompt !== 'string' || prompt.length === 0) throw invalidField('prompt', `'prompt' must be a non-empty string, got ${describe(prompt)}`);
  const echo = fields.boolean('echo') ?? false;
  const logprobs = fields.integer('logprobs', 0, 5) ?? 0;
  const sampling = samplingRequest(fields, fields.integer('max_tokens', 0, Number.MAX_SAFE_INTEGER) ?? context.defaultMaxTokens);
  fields.refuseOthers();
  const model = new GenerationModel(await context.catalog.model(modelName));
  if (logprobs > 0) model.checkLogprobs('logprobs');
  const samplingParameters = logprobs > 0 ? { ...sampling.samplingParameters, logprobs } : sampling.samplingParameters;
  await answerChoices(context, res, signal, model, sampling, { prompt, samplingParameters, echo, logprobs: logprobs > 0 }, COMPLETION_FORMAT);
};

const COMPLETION_FORMAT: ChoiceFormat = {
  object: 'text_completion',
  chunkObject: 'text_completion',
  idPrefix: 'cmpl',
  whole: ({ text, logprobs, finishReason }) => ({ text, logprobs: logprobs.length > 0 ? completionLogprobs(logprobs, 0) : null, finish_reason: finishReason }),
  delta: ({ text, logprobs }, sent) => ({ text, logprobs: logprobs ? completionLogprobs(logprobs, sent) : null }),
  ending: () => ({ text: '' }),
};
