import type { Reply } from './instance.js';

/**
 * Sends until the answer is not 503, at most `tries` times. A custom directive's call that its
 * timeout stopped while its thread waited for a core (a loaded machine, the low-priority cell)
 * answers 503 and may be retried (docs/security.md, The sandbox): a test asserts the answer of a
 * call that got to run.
 */
export async function untilNotBusy(send: () => Promise<Reply>, tries = 5): Promise<Reply> {
  let reply = await send();
  for (let i = 1; i < tries && reply.status === 503; i++) reply = await send();
  return reply;
}
