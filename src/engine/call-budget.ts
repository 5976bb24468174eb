/**
 * How many bus calls one request from outside may cause in all: its own, and those of every request
 * they lead to, on any thread (through the router or straight to a peer) and in cluster mode on any
 * instance. Hops bound how deep a tree of calls goes (MAX_BUS_HOPS); this bounds how wide.
 *
 * The budget travels with the calls: a request holds what is left of it; each call it makes costs
 * one and lends the callee a share of what is then left for its own calls, and the callee's answer
 * gives back what it did not use. The share is 1/(n + 2) with n calls of the request already in
 * flight: half for a call made alone (a chain of calls 8 deep still gets 3 at its end), and n calls
 * made at once (state.run) leave about 1/(n + 1) of the budget, so ~44 of 1 000 may be in flight at
 * once before the next is refused (a call has 16 runs running at most). A lease whose answer never says (a timeout, a thread that died) is spent, so
 * whatever its callee still does stays within it: the total over the whole tree never exceeds the
 * root's budget.
 */
import { Errors } from '../shared/errors.js';

/** `--max-bus-calls`: bus calls one request from outside may cause in all. */
export const DEFAULT_BUS_CALLS_PER_REQUEST = 1_000;

/**
 * What an API's AFTER_FLOW pass keeps of its request's budget: it runs after the answer, which
 * gives the rest back to the caller.
 */
export const AFTER_FLOW_BUS_CALLS = 16;

export class CallBudget {
  /** Calls of this request sent and not answered. */
  private inFlight = 0;

  constructor(private remaining: number) {}

  /** Calls this request and those it causes may still make. */
  get left(): number {
    return this.remaining;
  }

  /** One call to `path`: costs one, and returns the callee's lease; throws (508) when nothing is left. */
  take(path: string): number {
    if (this.remaining < 1) throw Errors.quotaBusCalls(path);
    this.remaining -= 1;
    const lease = Math.floor(this.remaining / (this.inFlight + 2));
    this.remaining -= lease;
    this.inFlight++;
    return lease;
  }

  /** The call is over: what its answer says the callee did not use of `lease` comes back (0: a failed call, all spent). */
  settle(lease: number, unused: number): void {
    this.inFlight--;
    if (Number.isInteger(unused) && unused > 0) this.remaining += Math.min(lease, unused);
  }

  /**
   * The request answers: it gives back all that is left, but what its AFTER_FLOW pass (which runs
   * after the answer) keeps; from then on it may make only the calls it kept.
   */
  answer(hasAfterFlow: boolean): number {
    const kept = hasAfterFlow ? Math.min(this.remaining, AFTER_FLOW_BUS_CALLS) : 0;
    const given = this.remaining - kept;
    this.remaining = kept;
    return given;
  }
}
