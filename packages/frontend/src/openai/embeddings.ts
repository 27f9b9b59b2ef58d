import { Buffer } from 'node:buffer';
import { embeddingModelOf, type EmbeddingInputs } from './embedding-model.js';
import type { OpenAIHandler } from './openai-context.js';
import { invalidField } from './openai-error.js';
import { describe } from './request-fields.js';
import { sendOpenAIJson } from './openai-response.js';
import { startRequest } from './request-start.js';

/** OpenAI's limit on inputs per request. */
const MAX_INPUTS = 2048;

/** `POST /v1/embeddings`: a vector per input, from any model embedding-model.ts can read. */
export const embeddings: OpenAIHandler = async (context, req, res) => {
  const { fields, signal } = await startRequest(context, req, res);
  const modelName = fields.requiredString('model');
  const inputs = embeddingInputs(fields.raw('input'));
  const dimensions = fields.integer('dimensions', 1, Number.MAX_SAFE_INTEGER);
  const encoding = fields.raw('encoding_format') ?? 'float';
  if (encoding !== 'float' && encoding !== 'base64') throw invalidField('encoding_format', `'encoding_format' must be 'float' or 'base64', got ${describe(encoding)}`);
  fields.raw('user');
  fields.refuseOthers();
  const catalogModel = await context.catalog.model(modelName);
  const { vectors, promptTokens } = await embeddingModelOf(context.server, context.catalog, catalogModel).embed(inputs, dimensions, signal);
  const data = vectors.map((vector, index) => ({
    object: 'embedding',
    index,
    // base64: the vector's float32 bytes, little-endian, as OpenAI sends them.
    embedding: encoding === 'base64' ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector,
  }));
  // As Triton's frontend: no usage where the model does not count its tokens.
  const usage = promptTokens === undefined ? {} : { usage: { prompt_tokens: promptTokens, total_tokens: promptTokens } };
  sendOpenAIJson(res, 200, { object: 'list', data, model: modelName, ...usage });
};

/** `input`: a text, a list of texts, a list of token ids, or a list of those lists. */
function embeddingInputs(input: unknown): EmbeddingInputs {
  const isIds = (value: unknown): value is number[] => Array.isArray(value) && value.length > 0 && value.every((id) => Number.isSafeInteger(id) && (id as number) >= 0);
  if (typeof input === 'string' && input.length > 0) return { kind: 'text', texts: [input] };
  if (Array.isArray(input) && input.length > 0 && input.length <= MAX_INPUTS) {
    if (input.every((text) => typeof text === 'string' && text.length > 0)) return { kind: 'text', texts: input as string[] };
    if (isIds(input)) return { kind: 'tokens', ids: [input] };
    if (input.every(isIds)) return { kind: 'tokens', ids: input as number[][] };
  }
  throw invalidField('input', `'input' must be a non-empty string, a list of up to ${MAX_INPUTS} of them, or token ids (a list of non-negative integers, or a list of such lists), got ${describe(input)}`);
}
