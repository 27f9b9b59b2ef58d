import { Template } from '@huggingface/jinja';
import { InferenceError } from '@tritium/core';
import type { ChatMessage } from './chat-messages.js';

/** A model's chat template (Jinja, as Hugging Face tokenizers and GGUF files carry them). */
export interface ChatTemplate {
  /** Where it was found, for error messages. */
  readonly source: string;
  readonly text: string;
  /** The strings templates write as `bos_token` and `eos_token` ('' when unknown). */
  readonly bosToken: string;
  readonly eosToken: string;
}

/** A template parsed once, rendering a conversation into the prompt the model continues. */
export class ChatPrompt {
  private readonly template: Template;

  constructor(private readonly chatTemplate: ChatTemplate) {
    try {
      this.template = new Template(chatTemplate.text);
    } catch (error) {
      throw new InferenceError('INVALID_ARG', `the chat template from ${chatTemplate.source} does not parse: ${(error as Error).message}`);
    }
  }

  /** The prompt for `messages`, ending where the assistant's answer begins (add_generation_prompt). */
  render(messages: readonly ChatMessage[]): string {
    try {
      return this.template.render({
        messages,
        add_generation_prompt: true,
        bos_token: this.chatTemplate.bosToken,
        eos_token: this.chatTemplate.eosToken,
      });
    } catch (error) {
      // A template's raise_exception() refuses a conversation it cannot render (roles out of order, say): the client's to fix.
      throw new InferenceError('INVALID_ARG', `the chat template from ${this.chatTemplate.source} refused the messages: ${(error as Error).message}`);
    }
  }
}
