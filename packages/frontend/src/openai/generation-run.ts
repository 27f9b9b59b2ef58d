import type { InferenceServer, InferResponse } from '@tritium/core';
import type { Generation, GenerationModel } from './generation-model.js';
import { generationOutput, type GenerationOutput, type VllmLogprobs } from './generation-output.js';

/** OpenAI's token counts. */
export interface Usage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
}

/** How one choice ended: the model's finish_reason, or 'stop' where it sends none (as Triton's frontend always says). */
export type FinishReason = string;

/** What a choice's responses add up to. */
export interface ChoiceResult {
  readonly text: string;
  readonly logprobs: VllmLogprobs;
  readonly finishReason: FinishReason;
}

/**
 * The n generations of one OpenAI request, started together (one inference each): a
 * refusal (bad request, no such model, a full queue) throws from the constructor, before
 * anything is answered, and cancels those already started. `signal` cancels them all (the
 * client went away), and so does the first to fail.
 */
export class GenerationRun {
  private readonly streams: Array<AsyncGenerator<InferResponse, void, undefined>> = [];
  /** Cancels every choice: a stream not yet read would not be cancelled by its return(). */
  private readonly cancel = new AbortController();
  private promptTokens: number | undefined;
  private completionTokens = 0;

  constructor(server: InferenceServer, private readonly model: GenerationModel, generations: readonly Generation[], signal: AbortSignal) {
    const name = model.model.facts.name;
    if (signal.aborted) this.cancel.abort(signal.reason);
    else signal.addEventListener('abort', () => this.cancel.abort(signal.reason), { once: true });
    try {
      for (const generation of generations) this.streams.push(server.startStream(name, model.request(generation, this.cancel.signal)));
    } catch (error) {
      this.cancel.abort(error);
      throw error;
    }
  }

  /**
   * Reads every choice's responses as they come, choices side by side, calling `onOutput`
   * with each and `onEnd` as each choice ends; resolves when all have ended, and rejects
   * with the first error (the other choices are cancelled, and nothing more is reported).
   */
  async each(onOutput: (index: number, output: GenerationOutput) => void, onEnd: (index: number, finishReason: FinishReason) => void): Promise<void> {
    try {
      await Promise.all(
        this.streams.map(async (stream, index) => {
          let finishReason: FinishReason = 'stop';
          for await (const response of stream) {
            if (this.cancel.signal.aborted) return;
            const output = generationOutput(response);
            this.promptTokens ??= output.inputTokens;
            this.completionTokens += output.outputTokens ?? 0;
            if (output.finishReason) finishReason = output.finishReason;
            onOutput(index, output);
          }
          if (!this.cancel.signal.aborted) onEnd(index, finishReason);
        }),
      );
      // Cancelled while its last responses were read: not a whole answer.
      this.cancel.signal.throwIfAborted();
    } catch (error) {
      this.cancel.abort(error);
      throw error;
    }
  }

  /** Every choice whole: the text of all its responses, in order. */
  async results(): Promise<ChoiceResult[]> {
    const texts: string[][] = this.streams.map(() => []);
    const logprobs: Array<NonNullable<VllmLogprobs>[number][]> = this.streams.map(() => []);
    const finishReasons: FinishReason[] = [];
    await this.each(
      (index, output) => {
        texts[index]!.push(output.text);
        logprobs[index]!.push(...(output.logprobs ?? []));
      },
      (index, finishReason) => (finishReasons[index] = finishReason),
    );
    return texts.map((text, index) => ({ text: text.join(''), logprobs: logprobs[index]!, finishReason: finishReasons[index]! }));
  }

  /** The usage so far; undefined when the model reports no token counts. */
  usage(): Usage | undefined {
    if (!this.model.countsTokens || this.promptTokens === undefined) return undefined;
    return { prompt_tokens: this.promptTokens, completion_tokens: this.completionTokens, total_tokens: this.promptTokens + this.completionTokens };
  }
}
