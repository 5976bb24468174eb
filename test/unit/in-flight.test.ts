import { describe, expect, it } from 'vitest';
import type { EngineRequest } from '../../src/shared/protocol/requests.js';
import { InFlight } from '../../src/front/scheduling/in-flight.js';
import { PendingRequest } from '../../src/front/scheduling/pending-request.js';

function job(id: string): PendingRequest {
  const request: EngineRequest = {
    id,
    verb: 'GET',
    path: '/',
    rawQuery: '',
    rawHeaders: [],
    body: null,
    ip: '127.0.0.1',
    hop: 0,
    budget: 1000,
    viaBus: false,
    receivedAt: 0,
  };
  return new PendingRequest(request, 30_000, () => {});
}

describe('InFlight (a thread link’s requests in flight)', () => {
  it('gives each request in flight its own number and hands each job back once', () => {
    const inFlight = new InFlight();
    const [a, b, c] = [job('a'), job('b'), job('c')];
    const numbers = [inFlight.add(a, 1), inFlight.add(b, 2), inFlight.add(c, 3)];
    expect(new Set(numbers).size).toBe(3);
    expect(Math.min(...numbers)).toBeGreaterThanOrEqual(1);
    expect(inFlight.size).toBe(3);

    expect(inFlight.take(numbers[1]!)).toBe(b);
    expect(inFlight.take(numbers[1]!)).toBeUndefined();
    expect(inFlight.take(numbers[2]!)).toBe(c);
    expect(inFlight.size).toBe(1);
  });

  it('reuses a number only after its answer came', () => {
    const inFlight = new InFlight();
    const first = inFlight.add(job('a'), 1);
    const second = inFlight.add(job('b'), 1);
    inFlight.take(first);
    const d = job('d');
    const third = inFlight.add(d, 2);
    expect(third).not.toBe(second);
    expect(inFlight.take(third)).toBe(d);
  });

  it('answers undefined for numbers that are not in flight', () => {
    const inFlight = new InFlight();
    inFlight.add(job('a'), 1);
    for (const number of [0, -1, 2, 999, Number.NaN, 1.5]) expect(inFlight.take(number)).toBeUndefined();
    expect(inFlight.size).toBe(1);
  });

  it('knows when the oldest request in flight was sent, also within the same millisecond', () => {
    const inFlight = new InFlight();
    expect(inFlight.oldestSentAt(100)).toBe(Infinity);
    const first = inFlight.add(job('a'), 10);
    inFlight.add(job('b'), 20);
    expect(inFlight.oldestSentAt(100)).toBe(10);
    inFlight.take(first);
    expect(inFlight.oldestSentAt(100)).toBe(20);
    inFlight.add(job('c'), 5);
    expect(inFlight.oldestSentAt(100)).toBe(5);
    inFlight.takeAll();
    expect(inFlight.oldestSentAt(100)).toBe(Infinity);
    inFlight.add(job('d'), 100);
    expect(inFlight.oldestSentAt(100)).toBe(100);
  });

  it('hands back every job when the link closes', () => {
    const inFlight = new InFlight();
    const jobs = [job('a'), job('b'), job('c')];
    const numbers = jobs.map((j, i) => inFlight.add(j, i));
    inFlight.take(numbers[0]!);
    expect(inFlight.takeAll()).toEqual([jobs[1], jobs[2]]);
    expect(inFlight.size).toBe(0);
    expect(inFlight.take(numbers[1]!)).toBeUndefined();
  });
});
