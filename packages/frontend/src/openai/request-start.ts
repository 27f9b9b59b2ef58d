import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestBody } from '../http/request-body.js';
import type { OpenAIContext } from './openai-context.js';
import { RequestFields } from './request-fields.js';

/** A POST route's start: its JSON fields, and a signal that aborts when the client goes before its answer is sent. */
export async function startRequest(context: OpenAIContext, req: IncomingMessage, res: ServerResponse): Promise<{ fields: RequestFields; signal: AbortSignal }> {
  const fields = RequestFields.parse((await requestBody(req, context.bodyLimitBytes, 'json')).toString('utf8'));
  const abort = new AbortController();
  context.connections.cancelOnDisconnect(req, res, () => abort.abort());
  return { fields, signal: abort.signal };
}
