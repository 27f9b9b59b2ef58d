import type { ServerResponse } from 'node:http';
import { openAIErrorOf } from './openai-error.js';
import { sendOpenAIError } from './openai-response.js';

/**
 * OpenAI's streaming answer: `data: <json>` events, ending with `data: [DONE]`. The
 * status and headers go with the first event, so that a model failing before it sends
 * anything is answered as any error is, with its status.
 */
export class ServerSentEvents {
  private started = false;

  constructor(private readonly res: ServerResponse) {}

  send(event: unknown): void {
    this.start();
    this.res.write(`data: ${JSON.stringify(event)}\n\n`);
  }

  /** An error: before any event, an error answer; after, an `error` event (OpenAI's clients raise it), then the end. */
  fail(error: unknown): void {
    if (this.started) this.res.end(`data: ${openAIErrorOf(error).body}\n\n`);
    else sendOpenAIError(this.res, error);
  }

  done(): void {
    this.start();
    this.res.end('data: [DONE]\n\n');
  }

  private start(): void {
    if (this.started) return;
    this.started = true;
    this.res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  }
}
