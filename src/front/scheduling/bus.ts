import { Errors } from '../../shared/errors.js';
import { busFailure, busRequest, MAX_BUS_HOPS, splitApiPath } from '../../engine/bus-rules.js';
import type { ActorSpec } from '../../shared/protocol/cell-messages.js';
import { answerPayload, type BusCall, type CallReply } from '../../shared/protocol/bus-calls.js';
import { readResponseBytes } from '../../shared/protocol/requests.js';
import type { ApiDirectory, ApiEntry } from './api-directory.js';
import type { Dispatcher } from './dispatcher.js';

/**
 * Cluster mode: where a bus call to `api` goes. It calls `callHere` when this instance runs it, or
 * replies itself (the owner instance's answer, or a refusal).
 */
export type PlaceBusCall = (api: ApiEntry, call: BusCall, reply: CallReply, callHere: () => void) => void;

/**
 * The in-process message bus (SPEC §7 Pull/Push/Http to `$.memory.anvil-localhost`): a call from an
 * actor thread to another API of the same host is delivered to that API's actor like any request —
 * private APIs included, no socket opened — with one more hop; the answer goes back to the caller
 * as the target's thread sent it: its status and route are read for the metrics, its headers and
 * body are neither decoded nor copied. In cluster mode a call to an API placed on another instance
 * goes to that owner (src/front/placement/placed-work.ts), which delivers it with `callHere`.
 */
export class Bus {
  private place: PlaceBusCall | null = null;

  constructor(
    private readonly directory: ApiDirectory,
    private readonly dispatcher: Dispatcher,
  ) {}

  usePlacement(place: PlaceBusCall): void {
    this.place = place;
  }

  /**
   * Delivers the call; `offerPeer` may then tell the caller's thread where a thread of the target
   * takes its next calls directly (the caller's thread decides whether to use it).
   */
  call(
    caller: ActorSpec,
    call: BusCall,
    reply: CallReply,
    offerPeer: (target: ActorSpec, key: string) => void = () => {},
  ): void {
    const api = this.target(caller.host, call, reply);
    if (api === undefined) return;
    if (this.place === null) return this.deliver(api, call, reply, offerPeer);
    // A call its owner runs elsewhere gets no peer here: the caller's next calls come back this way.
    this.place(api, call, reply, () => this.deliver(api, call, reply, offerPeer));
  }

  /** On the owner of a placed API: a call an instance of `host`'s caller forwarded. Never forwarded again. */
  callHere(host: string, call: BusCall, reply: CallReply): void {
    const api = this.target(host, call, reply);
    if (api !== undefined) this.deliver(api, call, reply, () => {});
  }

  /** The API the call names, or undefined once the bus has answered (too deep, no such API). */
  private target(host: string, call: BusCall, reply: CallReply): ApiEntry | undefined {
    // Refused here, the call's lease was not used: it goes back.
    if (call.hop + 1 > MAX_BUS_HOPS)
      return void reply(answerPayload(busFailure(Errors.busTooDeep(MAX_BUS_HOPS), call.budget)));
    const { key } = splitApiPath(call.path);
    const api = key === '' ? undefined : this.directory.api(host, key);
    if (api === undefined || !api.record.active)
      return void reply(answerPayload(busFailure(Errors.notFound(), call.budget)));
    return api;
  }

  private deliver(
    api: ApiEntry,
    call: BusCall,
    reply: CallReply,
    offerPeer: (target: ActorSpec, key: string) => void,
  ): void {
    this.dispatcher.submit(api.spec, busRequest(call, this.dispatcher.nextId()), readResponseBytes, (outcome) => {
      if (outcome.ok) reply(outcome.response.payload);
      else reply(answerPayload(busFailure(outcome.error)));
    });
    offerPeer(api.spec, api.record.key);
  }
}
