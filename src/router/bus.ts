import { STATUS_CODES } from 'node:http';
import type { ActorSpec, BusCall } from '../protocol/messages.js';
import type { ApiDirectory } from './api-directory.js';
import type { Dispatcher } from './dispatcher.js';
import type { JobResponse } from './job.js';

/** Bus calls deeper than this are refused with 508 (SPEC §10): a cycle A → B → A stops here. */
export const MAX_BUS_HOPS = 8;

/**
 * The in-process message bus (SPEC §7 Pull/Push/Http to `$.memory.anvil-localhost`): a call from an
 * actor thread to another API of the same host is delivered to that API's actor like any request —
 * private APIs included, no socket opened — with one more hop; the answer goes back to the caller.
 */
export class Bus {
  constructor(
    private readonly directory: ApiDirectory,
    private readonly dispatcher: Dispatcher,
  ) {}

  call(caller: ActorSpec, call: BusCall, reply: (response: JobResponse) => void): void {
    const hop = call.hop + 1;
    if (hop > MAX_BUS_HOPS) return reply(json(508, `Loop Detected: more than ${MAX_BUS_HOPS} nested calls between APIs`));
    const slash = call.path.indexOf('/', 1);
    const key = slash < 0 ? call.path.slice(1) : call.path.slice(1, slash);
    const path = slash < 0 ? '/' : call.path.slice(slash);
    const api = key === '' ? undefined : this.directory.api(caller.host, key);
    if (api === undefined || !api.record.active) return reply(json(404, 'Not Found'));
    this.dispatcher.submit(
      api.spec,
      {
        id: this.dispatcher.nextId(),
        verb: call.verb,
        path,
        rawQuery: call.rawQuery,
        rawHeaders: call.rawHeaders,
        body: call.body,
        // The calling API, not a network peer: there is no client address on the bus.
        ip: '127.0.0.1',
        hop,
        viaBus: true,
        receivedAt: Date.now(),
      },
      (outcome) => {
        if (outcome.ok) reply(outcome.response);
        else reply(json(outcome.error.status, outcome.error.message));
      },
    );
  }
}

function json(status: number, message: string): JobResponse {
  return { status, headers: ['content-type', 'application/json; charset=utf-8'], body: JSON.stringify({ error: message || STATUS_CODES[status] }) };
}
