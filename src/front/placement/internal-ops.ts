import type { IncomingMessage, ServerResponse } from 'node:http';
import { splitApiPath } from '../../engine/bus-rules.js';
import { AnvilError, Errors } from '../../shared/errors.js';
import { readBody } from '../../shared/http/body.js';
import type { RunResult } from '../jobs/job-queue.js';
import type { InstanceLog } from '../../shared/logs/instance-log.js';
import { parseApiId } from '../../shared/protocol/api-id.js';
import { decodeCall, type BusCall, type CallReply } from '../../shared/protocol/bus-calls.js';
import { sendFailure, sendJson } from '../edge/http-response.js';
import { refusePlacement } from './forward-to-owner.js';
import { forwardedEpoch, type InternalOps } from './internal-door.js';
import { CALLER_HOST_HEADER } from './internal-headers.js';
import { INTERNAL_OPS, type ForwardedJob } from './owner-calls.js';
import { placementId } from './placed-releases.js';

/** An operation's body (a job's payload, a bus call) comes from another instance; this only bounds a broken one. */
const OP_BODY_LIMIT = 64 * 1024 * 1024;

export interface OpsDeps {
  /** Null when this instance may run the API's work now (it holds the lease, no older than `epoch`), else why not. */
  refusal(id: string, epoch: number): string | null;
  runJob(job: ForwardedJob): Promise<RunResult>;
  callBus(host: string, call: BusCall, reply: CallReply): void;
  log: InstanceLog;
}

/**
 * The owner's end of placed-work.ts, on the internal port once the cluster secret is checked: runs
 * a job another instance's worker took, or a bus call another instance's API made, if this instance
 * owns the API. A refusal (503) means that nothing ran: the sender waits for the next owner.
 */
export function internalOps(deps: OpsDeps): InternalOps {
  return (op, req, res) => {
    readBody(req, OP_BODY_LIMIT).then(
      (body) => {
        const bytes = body === null ? Buffer.alloc(0) : Array.isArray(body) ? Buffer.concat(body) : body;
        if (op === INTERNAL_OPS.jobRun) return runJob(deps, req, res, bytes);
        if (op === INTERNAL_OPS.busCall) return callBus(deps, req, res, bytes);
        sendFailure(res, Errors.internalOperation(`unknown internal operation ${op}`));
      },
      (error: unknown) => {
        if (!res.headersSent)
          sendFailure(res, error instanceof AnvilError ? error : Errors.internalOperation((error as Error).message));
      },
    );
  };
}

function runJob(deps: OpsDeps, req: IncomingMessage, res: ServerResponse, bytes: Buffer): void {
  const job = readJob(bytes);
  if (job === null) return sendFailure(res, Errors.internalOperation('not a job'));
  const { host, key } = parseApiId(job.api);
  const refused = deps.refusal(placementId(host, key), forwardedEpoch(req));
  if (refused !== null) return refusePlacement(res, refused);
  deps.runJob(job).then(
    (result) => {
      if (!res.destroyed) sendJson(res, 200, result);
    },
    (error: unknown) => {
      deps.log.error({ err: error, job: job.id }, 'placement: a job handed over by another instance could not run');
      if (!res.destroyed) sendJson(res, 200, { ok: false, error: 'the job could not run on its owner' });
    },
  );
}

function callBus(deps: OpsDeps, req: IncomingMessage, res: ServerResponse, bytes: Buffer): void {
  const host = req.headers[CALLER_HOST_HEADER];
  let call: BusCall;
  try {
    call = decodeCall(bytes).call;
  } catch {
    return sendFailure(res, Errors.internalOperation('not a bus call'));
  }
  if (typeof host !== 'string') return sendFailure(res, Errors.internalOperation('not a bus call'));
  const refused = deps.refusal(placementId(host, splitApiPath(call.path).key), forwardedEpoch(req));
  if (refused !== null) return refusePlacement(res, refused);
  deps.callBus(host, call, (payload) => {
    if (res.destroyed) return;
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': payload.length });
    res.end(payload);
  });
}

function readJob(bytes: Buffer): ForwardedJob | null {
  try {
    const job = JSON.parse(bytes.toString('utf8')) as Partial<ForwardedJob>;
    if (typeof job.id === 'string' && typeof job.api === 'string' && typeof job.payload === 'string')
      return { id: job.id, api: job.api, payload: job.payload };
  } catch {
    // not JSON
  }
  return null;
}
