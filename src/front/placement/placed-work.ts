import { busFailure } from '../../engine/bus-rules.js';
import { Errors } from '../../shared/errors.js';
import type { RunResult } from '../jobs/job-queue.js';
import type { InstanceLog } from '../../shared/logs/instance-log.js';
import { answerPayload, encodeCallHead, type BusCall, type CallReply } from '../../shared/protocol/bus-calls.js';
import { FRAME_HEADER } from '../../shared/protocol/frames.js';
import type { ApiEntry } from '../scheduling/api-directory.js';
import type { PlaceBusCall } from '../scheduling/bus.js';
import type { PlaceJobRun } from '../jobs/job-runner.js';
import { PLACEMENT_RETRY_AFTER_S, type OwnerTarget } from './forward-to-owner.js';
import { CALLER_HOST_HEADER } from './internal-headers.js';
import { INTERNAL_OPS, type ForwardedJob, type OwnerCalls } from './owner-calls.js';
import type { Route } from './placement-map.js';
import { placementId } from './placed-releases.js';

/** What placed work needs of the placement (placement.ts). */
export interface PlacementView {
  isPlaced(api: ApiEntry): boolean;
  route(id: string): Route;
  /** The route once an owner is known, waiting for placement rounds until `deadline` (Date.now()); `none` after it. */
  routeBy(id: string, deadline: number): Promise<Route>;
  /** The owner did not answer or refused: forgotten until the next round; true the first time (logged once). */
  setAside(target: OwnerTarget): boolean;
  /** How long a bus call waits for an owner (as a request does). */
  callWaitMs(): number;
  /** How long a job run waits for an owner: long enough for a dead owner's lease to run out and the API to move. */
  jobWaitMs(): number;
}

/**
 * The work of a placed API that does not come as an HTTP request, sent to its owner's internal port
 * (internal-ops.ts) like its requests are forwarded:
 *
 * - a job run: the worker that took the job keeps it (its lock, its per-API run slot) and has the
 *   owner run it, then settles it with the owner's outcome, so the job still runs once. An owner
 *   that refuses or cannot be reached ran nothing, or died in the run (which then runs again, at
 *   least once, as after any crash): the run waits for the next owner, up to jobWaitMs, before it
 *   fails as a retried run.
 * - a bus call: sent as the caller's thread sent it (the Call payload) and answered with the
 *   target thread's Response payload, as a local call is. No owner, or one that cannot be reached:
 *   503, as for a request.
 */
export class PlacedWork {
  constructor(
    private readonly placement: PlacementView,
    private readonly calls: OwnerCalls,
    private readonly log: InstanceLog,
  ) {}

  readonly placeJobRun: PlaceJobRun = async (api, job, runHere) => {
    if (!this.placement.isPlaced(api)) return runHere();
    const id = placementId(api.spec.host, api.spec.key);
    const deadline = Date.now() + this.placement.jobWaitMs();
    const body = [
      Buffer.from(JSON.stringify({ id: job.id, api: job.api, payload: job.payload } satisfies ForwardedJob)),
    ];
    for (;;) {
      const route = await this.placement.routeBy(id, deadline);
      if (route.kind === 'here') return runHere();
      if (route.kind === 'none')
        return { ok: false, error: "503 placement: no instance holds the API's lease; the job runs again later" };
      const target = { api: id, owner: route.owner, epoch: route.epoch, url: route.url };
      const sent = await this.calls.send(target, INTERNAL_OPS.jobRun, body);
      if (sent.kind === 'timeout')
        return { ok: false, error: `504 the owner of the API (${route.owner}) did not answer in time` };
      if (sent.kind === 'answer' && sent.status === 200) return readRunResult(sent.body);
      const why = sent.kind === 'answer' ? `refused it (${sent.status})` : `cannot be reached (${sent.error})`;
      if (this.placement.setAside(target))
        this.log.info(
          { owner: route.owner, epoch: route.epoch, job: job.id, api: id },
          `placement: the owner of an API ${why}; its job waits for the next owner`,
        );
      if (Date.now() >= deadline)
        return { ok: false, error: `503 placement: the owner of the API ${why}; the job runs again later` };
    }
  };

  readonly placeBusCall: PlaceBusCall = (api, call, reply, callHere) => {
    if (!this.placement.isPlaced(api)) return callHere();
    const id = placementId(api.spec.host, api.spec.key);
    const now = this.placement.route(id);
    if (now.kind === 'here') return callHere();
    const sending =
      now.kind === 'owner' ? this.send(id, now, api, call, reply) : this.waitAndSend(id, api, call, reply, callHere);
    sending.catch((error: unknown) => {
      this.log.error({ err: error, api: id }, 'placement: a bus call could not be routed');
      reply(refusal('the call could not be routed'));
    });
  };

  private async waitAndSend(
    id: string,
    api: ApiEntry,
    call: BusCall,
    reply: CallReply,
    callHere: () => void,
  ): Promise<void> {
    const route = await this.placement.routeBy(id, Date.now() + this.placement.callWaitMs());
    if (route.kind === 'here') return callHere();
    if (route.kind === 'none') return reply(refusal("no instance holds the API's lease yet"));
    await this.send(id, route, api, call, reply);
  }

  private async send(
    id: string,
    route: Extract<Route, { kind: 'owner' }>,
    api: ApiEntry,
    call: BusCall,
    reply: CallReply,
  ): Promise<void> {
    const target = { api: id, owner: route.owner, epoch: route.epoch, url: route.url };
    const head = encodeCallHead(0, call).subarray(FRAME_HEADER);
    const sent = await this.calls.send(target, INTERNAL_OPS.busCall, call.body === null ? [head] : [head, call.body], {
      [CALLER_HOST_HEADER]: api.spec.host,
    });
    if (sent.kind === 'answer' && sent.status === 200) return reply(sent.body);
    if (sent.kind === 'timeout') return reply(answerPayload(busFailure(Errors.ownerTimeout())));
    if (sent.kind === 'answer')
      return reply(refusal(`the instance that owns the API (${route.owner}) refused the call (${sent.status})`));
    if (this.placement.setAside(target))
      this.log.info(
        { owner: route.owner, epoch: route.epoch, err: sent.error },
        'placement: the owner of an API did not answer; its bus call was refused with 503',
      );
    reply(refusal(`the instance that owns the API (${route.owner}) cannot be reached`));
  }
}

/** A bus call's answer when no owner may run it now: 503 with `retry-after`, as a request gets. */
function refusal(reason: string): Buffer {
  const refused = busFailure(Errors.placementUnavailable(reason));
  return answerPayload({ ...refused, headers: [...refused.headers, 'retry-after', String(PLACEMENT_RETRY_AFTER_S)] });
}

function readRunResult(body: Buffer): RunResult {
  try {
    const result = JSON.parse(body.toString('utf8')) as Partial<{ ok: boolean; error: string }>;
    if (result.ok === true) return { ok: true };
    if (result.ok === false && typeof result.error === 'string') return { ok: false, error: result.error };
  } catch {
    // fall through
  }
  return { ok: false, error: "the owner's answer about the run could not be read" };
}
