import { invalidField, unsupportedField } from './openai-error.js';
import { describe } from './request-fields.js';

/** One message as chat templates read it: a role and its text. */
export interface ChatMessage {
  readonly role: string;
  readonly content: string;
  readonly name?: string;
}

const ROLES = ['system', 'developer', 'user', 'assistant', 'tool'];

/**
 * OpenAI's `messages`, checked: each a role and content that is text (a string, or a list
 * of `{type: "text"}` parts, joined). Images, audio and tool calls are refused, as Triton's
 * frontend refuses every part but text.
 */
export function chatMessages(value: unknown): ChatMessage[] {
  if (!Array.isArray(value) || value.length === 0) throw invalidField('messages', `'messages' must be a non-empty list, got ${describe(value)}`);
  return value.map((message, index) => {
    const param = `messages[${index}]`;
    if (typeof message !== 'object' || message === null || Array.isArray(message)) throw invalidField(param, `'${param}' must be an object, got ${describe(message)}`);
    const { role, content, name, tool_calls: toolCalls } = message as Record<string, unknown>;
    if (typeof role !== 'string' || !ROLES.includes(role)) throw invalidField(`${param}.role`, `'${param}.role' must be one of ${ROLES.join(', ')}, got ${describe(role)}`);
    if (toolCalls !== undefined && toolCalls !== null) throw unsupportedField(`${param}.tool_calls`, 'tool calls are not supported');
    if (name !== undefined && name !== null && typeof name !== 'string') throw invalidField(`${param}.name`, `'${param}.name' must be a string`);
    return { role, content: messageText(content, param), ...(typeof name === 'string' ? { name } : {}) };
  });
}

function messageText(content: unknown, param: string): string {
  if (typeof content === 'string') return content;
  // An assistant message may carry no content (it had tool calls).
  if (content === undefined || content === null) return '';
  if (!Array.isArray(content)) throw invalidField(`${param}.content`, `'${param}.content' must be a string or a list of parts, got ${describe(content)}`);
  return content
    .map((part, index) => {
      const { type, text } = (part ?? {}) as Record<string, unknown>;
      if (type !== 'text') throw unsupportedField(`${param}.content[${index}]`, `only text message parts are supported, got ${describe(type)}`);
      if (typeof text !== 'string') throw invalidField(`${param}.content[${index}].text`, `'${param}.content[${index}].text' must be a string`);
      return text;
    })
    .join('');
}
