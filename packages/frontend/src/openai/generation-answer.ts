import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Generation, GenerationModel } from './generation-model.js';
import type { GenerationOutput } from './generation-output.js';
import { GenerationRun, type ChoiceResult, type FinishReason } from './generation-run.js';
import type { OpenAIContext } from './openai-context.js';
import { sendOpenAIJson } from './openai-response.js';
import { choiceSampling, type SamplingRequest } from './sampling-fields.js';
import { ServerSentEvents } from './server-sent-events.js';

/** How a route writes its choices: whole (one JSON answer), or as chunks of a stream. */
export interface ChoiceFormat {
  /** `object` of the whole answer and of each chunk, e.g. 'text_completion' / 'text_completion', 'chat.completion' / 'chat.completion.chunk'. */
  readonly object: string;
  readonly chunkObject: string;
  /** The id's prefix: 'cmpl' or 'chatcmpl'. */
  readonly idPrefix: string;
  whole(result: ChoiceResult): Record<string, unknown>;
  /** What opens a choice's stream, if anything (chat's role). */
  opening?(): Record<string, unknown>;
  /** A chunk's choice for one response; `sent`: the choice's text streamed before it. */
  delta(output: GenerationOutput, sent: number): Record<string, unknown>;
  /** The last chunk's choice, with no more text. */
  ending(): Record<string, unknown>;
}

/**
 * Generates the request's n choices of one prompt (`generation`, whose sampling parameters
 * each choice varies by choiceSampling) and answers them in `format`.
 */
export async function answerChoices(
  context: OpenAIContext,
  res: ServerResponse,
  signal: AbortSignal,
  model: GenerationModel,
  sampling: SamplingRequest,
  generation: Omit<Generation, 'stream'>,
  format: ChoiceFormat,
): Promise<void> {
  const generations = Array.from({ length: sampling.n }, (_, index) => ({
    ...generation,
    stream: sampling.stream,
    samplingParameters: choiceSampling(generation.samplingParameters, index),
  }));
  const run = new GenerationRun(context.server, model, generations, signal);
  await answerGeneration(res, run, format, { model: model.model.facts.name, stream: sampling.stream, includeUsage: sampling.includeUsage });
}

/**
 * Answers a generation's run in OpenAI's shape: one JSON object with every choice and
 * the usage, or a stream of chunks (each choice's text as it comes, then a chunk with its
 * finish_reason; a usage chunk when stream_options asked for one) ending with `[DONE]`.
 */
export async function answerGeneration(res: ServerResponse, run: GenerationRun, format: ChoiceFormat, options: { readonly model: string; readonly stream: boolean; readonly includeUsage: boolean }): Promise<void> {
  const head = { id: `${format.idPrefix}-${randomUUID()}`, created: Math.floor(Date.now() / 1000), model: options.model };
  if (!options.stream) {
    const results = await run.results();
    const choices = results.map((result, index) => ({ index, ...format.whole(result) }));
    const usage = run.usage();
    sendOpenAIJson(res, 200, { ...head, object: format.object, choices, ...(usage ? { usage } : {}) });
    return;
  }
  const events = new ServerSentEvents(res);
  // With include_usage, OpenAI's chunks say `usage: null` until the last.
  const usageField = options.includeUsage ? { usage: null } : {};
  const chunk = (index: number, choice: Record<string, unknown>, finishReason: FinishReason | null) =>
    events.send({ ...head, object: format.chunkObject, choices: [{ index, ...choice, logprobs: choice.logprobs ?? null, finish_reason: finishReason }], ...usageField });
  // Each opened choice's text streamed so far.
  const sent = new Map<number, number>();
  const open = (index: number) => {
    if (sent.has(index)) return;
    sent.set(index, 0);
    if (format.opening) chunk(index, format.opening(), null);
  };
  try {
    await run.each(
      (index, output) => {
        open(index);
        chunk(index, format.delta(output, sent.get(index)!), null);
        sent.set(index, sent.get(index)! + output.text.length);
      },
      (index, finishReason) => {
        open(index);
        chunk(index, format.ending(), finishReason);
      },
    );
  } catch (error) {
    events.fail(error);
    return;
  }
  if (options.includeUsage) events.send({ ...head, object: format.chunkObject, choices: [], usage: run.usage() ?? null });
  events.done();
}
