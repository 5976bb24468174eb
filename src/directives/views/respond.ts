import type { Message } from '../../engine/message.js';

/** Makes an HTML page the response body; an upstream's content-encoding no longer describes it. */
export function respondHtml(message: Message, html: string): void {
  if (message.isResponseHeader('content-encoding')) message.removeHeader('content-encoding');
  message.setHeader('content-type', 'text/html; charset=utf-8');
  message.setBody(html);
}
