/**
 * Rules of the in-process bus that both of its ends apply: the router's (front/scheduling/bus.ts) and the
 * calling thread's, whether it sends a call through the router (cell/actors/bus-client.ts) or straight
 * to a peer (cell/actors/peer-link.ts).
 */
import { errorBody, type AnvilError } from '../shared/errors.js';
import type { BusCall, BusResponse } from '../shared/protocol/bus-calls.js';
import type { EngineRequest } from '../shared/protocol/requests.js';

/** Bus calls deeper than this are refused with 508 (SPEC §10): a cycle A → B → A stops there. */
export const MAX_BUS_HOPS = 8;

/**
 * The request a bus call becomes for its target, one hop deeper, whether the router delivers it or
 * the caller's thread sends it straight to a peer.
 */
export function busRequest(call: BusCall, id: string): EngineRequest {
  return {
    id,
    verb: call.verb,
    path: splitApiPath(call.path).path,
    rawQuery: call.rawQuery,
    rawHeaders: call.rawHeaders,
    body: call.body,
    // The calling API, not a network peer: there is no client address on the bus.
    ip: '127.0.0.1',
    hop: call.hop + 1,
    budget: call.budget,
    viaBus: true,
    receivedAt: Date.now(),
  };
}

/**
 * A bus call's answer when the bus itself, not the target API, answers it (404, 508, 502…): the
 * error's `{"error", "code"}`, as the router answers a client, with `retry-after` when it says.
 */
export function busFailure(error: AnvilError, budgetLeft = 0): BusResponse {
  const headers = ['content-type', 'application/json; charset=utf-8'];
  if (error.retryAfterSeconds !== undefined) headers.push('retry-after', String(error.retryAfterSeconds));
  return {
    status: error.status,
    headers,
    body: Buffer.from(JSON.stringify(errorBody(error))),
    budgetLeft,
  };
}

/** `/users/42` → { key: 'users', path: '/42' }: the API a bus call names, and the path within it. */
export function splitApiPath(full: string): { key: string; path: string } {
  const slash = full.indexOf('/', 1);
  return slash < 0 ? { key: full.slice(1), path: '/' } : { key: full.slice(1, slash), path: full.slice(slash) };
}
