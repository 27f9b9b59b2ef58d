import { randomInt } from 'node:crypto';
import { InferenceError, type BackendRequest } from '@tritium/core/backend';
import type { LlamaContextSequence, LlamaModel, SequenceEvaluateOptions, Token, TokenBias } from 'node-llama-cpp';
import type { GenerationMetrics } from './generation-metrics.js';
import { OutputText } from './output-text.js';
import { TokenLogprobs } from './token-logprobs.js';
import type { SamplingParameters } from './sampling-parameters.js';
import type { SequencePool } from './sequence-pool.js';
import { readGenerateRequest, responseTensors, type FinishReason, type GenerateRequest } from './tensors.js';

/** What one instance's generations share: the model, its context's sequences and the model version's metrics. */
export interface GenerationEngine {
  readonly model: LlamaModel;
  readonly sequences: SequencePool;
  /** Tokens one sequence holds, prompt and output together. */
  readonly contextSize: number;
  readonly metrics: GenerationMetrics;
  /** Biases for min_tokens: one that keeps EOS out, and none. */
  readonly eosBan: TokenBias;
  readonly noBias: TokenBias;
}

/**
 * Serves one request from start to end on a sequence of the shared context, answering
 * through its response sender (never throws). Tokens come from node-llama-cpp's
 * evaluate, which decodes every sequence's pending token in one batch; so each await
 * here is one decode step of the running batch, where a cancelled or finished request
 * leaves it.
 */
export async function generate(request: BackendRequest, engine: GenerationEngine): Promise<void> {
  const started = performance.now();
  let sequence: LlamaContextSequence | undefined;
  try {
    const input = readGenerateRequest(request);
    const prompt = tokenize(engine.model, input.prompt);
    if (prompt.length === 0) throw new InferenceError('INVALID_ARG', "input 'text_input' is empty, and this model adds no BOS token: there is nothing to continue");
    if (prompt.length >= engine.contextSize) {
      throw new InferenceError('INVALID_ARG', `the prompt has ${prompt.length} tokens; a sequence of this model holds ${engine.contextSize} (model.json 'context_size'), prompt and output together`);
    }
    sequence = engine.sequences.take();
    engine.metrics.prompt(prompt.length);
    await run(request, input, prompt, sequence, engine, started);
  } catch (error) {
    request.response.fail(InferenceError.from(error, 'INTERNAL', `model '${request.modelName}'`));
  } finally {
    if (sequence) await engine.sequences.release(sequence);
    engine.metrics.finished(performance.now() - started);
  }
}

function tokenize(model: LlamaModel, text: string): Token[] {
  // Special tokens in the text are read as such: a chat template's markers are.
  const tokens = model.tokenize(text, true);
  return model.tokens.shouldPrependBosToken && model.tokens.bos !== null ? [model.tokens.bos, ...tokens] : tokens;
}

async function run(request: BackendRequest, input: GenerateRequest, prompt: Token[], sequence: LlamaContextSequence, engine: GenerationEngine, started: number) {
  const { model, metrics } = engine;
  const { sampling } = input;
  const text = new OutputText((tokens, before) => model.detokenize(tokens as Token[], !sampling.skipSpecialTokens, before as Token[]), prompt, sampling.stop, sampling.includeStopStrInOutput);
  const maxTokens = Math.min(sampling.maxTokens ?? Infinity, engine.contextSize - prompt.length);
  const wantsLogprobs = input.outputs.has('logprobs') && sampling.logprobs !== undefined;
  const wantsConfidence = wantsLogprobs || input.outputs.has('cumulative_logprob');
  // A candidate's text as it would follow the tokens before it (a SentencePiece word keeps its leading space).
  const logprobs = new TokenLogprobs(wantsLogprobs ? sampling.logprobs : undefined, () => {
    const before = (text.tokenCount > 0 ? text.outputTokens().slice(-4) : prompt.slice(-4)) as Token[];
    return (token) => model.detokenize([token as Token], true, before);
  });
  const counts = { inputTokens: prompt.length, outputTokens: 0, logprobs };
  let sentTokens = 0;
  let previous: number | undefined;
  let finishReason: FinishReason | undefined;
  // Checked at each token boundary: the sequence leaves the batch at the next step.
  let cancelled = request.isCancelled;
  const stopListening = request.onCancel(() => (cancelled = true));
  try {
    // The token's probabilities cost a softmax over the vocabulary (and a Map of it for logprobs): only when asked for.
    const metadata = { confidence: wantsConfidence, probabilities: wantsLogprobs };
    for await (const generated of sequence.evaluateWithMetadata(prompt, metadata, evaluateOptions(sampling, text, engine))) {
      if (cancelled) break;
      const { token } = generated;
      const { confidence, probabilities } = generated as { confidence?: number; probabilities?: Map<Token, number> };
      if (wantsConfidence) logprobs.add(token, confidence, probabilities as ReadonlyMap<number, number> | undefined);
      const now = performance.now();
      metrics.token(now - started, previous === undefined ? undefined : now - previous);
      previous = now;
      if ((model.isEogToken(token) && !sampling.ignoreEos) || sampling.stopTokenIds.includes(token)) {
        counts.outputTokens = text.tokenCount + 1;
        finishReason = 'stop';
        break;
      }
      if (text.push(token)) finishReason = 'stop';
      else if (text.tokenCount >= maxTokens) finishReason = 'length';
      counts.outputTokens = text.tokenCount;
      if (finishReason) break;
      if (input.stream) {
        const delta = text.take(false);
        if (delta) {
          request.response.send(responseTensors(input, { text: delta, ...counts, outputTokens: counts.outputTokens - sentTokens, finishReason }));
          sentTokens = counts.outputTokens;
        }
      }
    }
  } finally {
    stopListening();
  }
  if (cancelled) {
    // As Triton's vLLM backend answers a cancelled request.
    request.response.fail(new InferenceError('CANCELLED', 'Request was cancelled'));
    return;
  }
  // The evaluation ends on its own only when the sequence's context is full.
  finishReason ??= 'length';
  const rest = text.take(true);
  const part = input.stream
    ? { text: rest, ...counts, outputTokens: counts.outputTokens - sentTokens, finishReason }
    : { text: (input.prependInput ? input.prompt : '') + rest, ...counts, finishReason };
  request.response.send(responseTensors(input, part), { final: true });
}

function evaluateOptions(sampling: SamplingParameters, text: OutputText, engine: GenerationEngine): SequenceEvaluateOptions {
  const penalized = sampling.repetitionPenalty !== 1 || sampling.frequencyPenalty !== 0 || sampling.presencePenalty !== 0;
  return {
    temperature: sampling.temperature,
    topK: sampling.topK,
    topP: sampling.topP,
    minP: sampling.minP,
    // node-llama-cpp's default seed is the current second: requests in the same second would sample alike.
    seed: sampling.seed ?? randomInt(2 ** 31),
    ...(penalized && {
      repeatPenalty: {
        // Over the output tokens, as vLLM's frequency and presence penalties are.
        punishTokens: () => text.outputTokens() as Token[],
        // Every output token: a sequence holds no more.
        maxPunishTokens: engine.contextSize,
        penalty: sampling.repetitionPenalty,
        frequencyPenalty: sampling.frequencyPenalty,
        presencePenalty: sampling.presencePenalty,
      },
    }),
    ...(sampling.minTokens > 0 && { tokenBias: () => (text.tokenCount < sampling.minTokens ? engine.eosBan : engine.noBias) }),
    // EOS is seen here, so that ignore_eos and the finish reason are decided here.
    yieldEogToken: true,
  };
}
