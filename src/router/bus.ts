import { busFailure, busRequest, MAX_BUS_HOPS, splitApiPath } from '../bus/rules.js';
import type { ActorSpec } from '../protocol/cell-messages.js';
import { answerPayload, type BusCall, type CallReply } from '../protocol/bus-calls.js';
import { readResponseBytes } from '../protocol/requests.js';
import type { ApiDirectory } from './api-directory.js';
import type { Dispatcher } from './dispatcher.js';

/**
 * The in-process message bus (SPEC §7 Pull/Push/Http to `$.memory.anvil-localhost`): a call from an
 * actor thread to another API of the same host is delivered to that API's actor like any request —
 * private APIs included, no socket opened — with one more hop; the answer goes back to the caller
 * as the target's thread sent it: its status and route are read for the metrics, its headers and
 * body are neither decoded nor copied.
 */
export class Bus {
  constructor(
    private readonly directory: ApiDirectory,
    private readonly dispatcher: Dispatcher,
  ) {}

  /**
   * Delivers the call; `offerPeer` may then tell the caller's thread where a thread of the target
   * takes its next calls directly (the caller's thread decides whether to use it).
   */
  call(caller: ActorSpec, call: BusCall, reply: CallReply, offerPeer: (target: ActorSpec, key: string) => void = () => {}): void {
    if (call.hop + 1 > MAX_BUS_HOPS) return reply(answerPayload(busFailure(508, `Loop Detected: more than ${MAX_BUS_HOPS} nested calls between APIs`)));
    const { key, path } = splitApiPath(call.path);
    const api = key === '' ? undefined : this.directory.api(caller.host, key);
    if (api === undefined || !api.record.active) return reply(answerPayload(busFailure(404, 'Not Found')));
    this.dispatcher.submit(
      api.spec,
      busRequest(call, this.dispatcher.nextId()),
      readResponseBytes,
      (outcome) => {
        if (outcome.ok) reply(outcome.response.payload);
        else reply(answerPayload(busFailure(outcome.error.status, outcome.error.message)));
      },
    );
    offerPeer(api.spec, key);
  }
}
