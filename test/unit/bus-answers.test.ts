/**
 * The router's bus hands the target thread's answer back to the caller as it came: the Response
 * payload's bytes themselves, with only status and route read (for the metrics). Answers the router
 * gives itself (404, a timeout) are encoded, and the caller reads both kinds the same way.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Errors } from '../../src/shared/errors.js';
import { callResultHead, decodeCallResult, type BusCall } from '../../src/shared/protocol/bus-calls.js';
import type { ActorSpec } from '../../src/shared/protocol/cell-messages.js';
import { FRAME_HEADER } from '../../src/shared/protocol/frames.js';
import { decodeRequest, encodeRequestHead, encodeResponse } from '../../src/shared/protocol/requests.js';
import type { ActorTable } from '../../src/front/scheduling/actor-table.js';
import type { ApiDirectory } from '../../src/front/scheduling/api-directory.js';
import { Bus } from '../../src/front/scheduling/bus.js';
import { Dispatcher, type RequestObserver } from '../../src/front/scheduling/dispatcher.js';
import type { PendingRequest, RequestOutcome } from '../../src/front/scheduling/pending-request.js';

const spec = (key: string) => ({ id: `h/e/${key}@1`, host: 'h', env: 'e', key, release: '1' }) as ActorSpec;
const call = (path: string, body: Buffer | null = null): BusCall => ({
  verb: 'POST',
  path,
  rawQuery: 'q=1',
  rawHeaders: ['x-a', 'b'],
  body,
  hop: 0,
  budget: 10,
});
const directory = {
  api: (_host: string, key: string) =>
    key === 'target' ? { record: { active: true }, spec: spec('target') } : undefined,
} as unknown as ApiDirectory;

let dispatcher: Dispatcher | undefined;
afterEach(() => dispatcher?.close());

/** A bus whose target API's jobs go to `onJob`; what the observer saw goes to `observed`. */
function busWith(onJob: (job: PendingRequest) => void): { bus: Bus; observed: RequestOutcome[] } {
  const observed: RequestOutcome[] = [];
  const observe: RequestObserver = (_spec, _request, outcome) => observed.push(outcome);
  dispatcher = new Dispatcher(
    { dispatch: (_spec: ActorSpec, job: PendingRequest) => onJob(job) } as unknown as ActorTable,
    30_000,
    observe,
  );
  return { bus: new Bus(directory, dispatcher), observed };
}

/** What the caller's thread reads from the CallResult frame the router writes for `answer`. */
function asCaller(answer: Buffer) {
  return decodeCallResult(Buffer.concat([callResultHead(9, answer.length), answer]).subarray(FRAME_HEADER));
}

describe('the router’s bus answers', () => {
  it('forwards the target’s Response payload itself, unread but for status and route', () => {
    const frame = encodeResponse(3, {
      status: 201,
      headers: ['content-type', 'text/plain'],
      body: 'made',
      route: 'post /things',
    });
    const payload = frame.subarray(FRAME_HEADER);
    const sent: Buffer[] = [];
    const { bus, observed } = busWith((job) => {
      // What the thread receives: the call's body, one hop deeper.
      const { request } = decodeRequest(
        Buffer.concat([encodeRequestHead(3, job.request), job.request.body as Buffer]).subarray(FRAME_HEADER),
      );
      expect([request.path, request.rawQuery, request.hop, request.viaBus, request.body?.toString()]).toEqual([
        '/things',
        'q=1',
        1,
        true,
        'new',
      ]);
      job.answer(payload);
    });
    bus.call(spec('caller'), call('/target/things', Buffer.from('new')), (answer) => sent.push(answer));
    expect(sent).toHaveLength(1);
    expect(sent[0]).toBe(payload);
    expect(observed).toEqual([{ ok: true, response: { status: 201, route: 'post /things', payload } }]);
    expect(asCaller(sent[0]!)).toEqual({
      number: 9,
      response: { status: 201, headers: ['content-type', 'text/plain'], body: Buffer.from('made'), budgetLeft: 0 },
    });
  });

  it('encodes the answers it gives itself: an unknown API, a failed job', () => {
    const sent: Buffer[] = [];
    const { bus } = busWith((job) => job.fail(Errors.timeout()));
    bus.call(spec('caller'), call('/nowhere/x'), (answer) => sent.push(answer));
    bus.call(spec('caller'), call('/target/x'), (answer) => sent.push(answer));
    const [missing, timedOut] = sent.map((answer) => asCaller(answer).response);
    expect([missing!.status, JSON.parse(missing!.body.toString())]).toEqual([
      404,
      { error: 'Not Found', code: 'ANVIL_ERR_NOT_FOUND' },
    ]);
    expect(timedOut!.status).toBe(Errors.timeout().status);
    expect(timedOut!.headers).toEqual(['content-type', 'application/json; charset=utf-8']);
    // The unknown API ran nothing: the call's lease goes back; a failed job's is spent.
    expect([missing!.budgetLeft, timedOut!.budgetLeft]).toEqual([10, 0]);
  });
});
