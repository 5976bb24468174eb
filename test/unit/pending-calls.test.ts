import { describe, expect, it } from 'vitest';
import { PendingCalls } from '../../src/shared/protocol/pending-calls.js';

describe('PendingCalls (calls sent over one connection and not answered yet)', () => {
  it('gives each call waiting its own number and hands each call back once', () => {
    const calls = new PendingCalls<string>();
    const numbers = [calls.add('a'), calls.add('b'), calls.add('c')];
    expect(new Set(numbers).size).toBe(3);
    expect(Math.min(...numbers)).toBeGreaterThanOrEqual(1);
    expect(calls.size).toBe(3);

    expect(calls.take(numbers[1]!)).toBe('b');
    expect(calls.take(numbers[1]!)).toBeUndefined();
    expect(calls.take(numbers[2]!)).toBe('c');
    expect(calls.size).toBe(1);
  });

  it('reuses a number once its answer came, never while its call waits', () => {
    const calls = new PendingCalls<string>();
    const first = calls.add('a');
    const second = calls.add('b');
    calls.take(first);
    const third = calls.add('c');
    expect(third).not.toBe(second);
    expect(calls.take(third)).toBe('c');
    expect(calls.take(second)).toBe('b');
  });

  it('keeps the number of a call given up on until its late answer came, so that answer reaches no newer call', () => {
    const calls = new PendingCalls<string>();
    const late = calls.add('timed out');
    calls.giveUp(late);
    expect(calls.size).toBe(0);
    const newer = calls.add('newer');
    expect(newer).not.toBe(late);
    // The late answer arrives: nobody waits for it, and the newer call is untouched.
    expect(calls.take(late)).toBeUndefined();
    expect(calls.size).toBe(1);
    // Now its number is free again.
    expect(calls.add('next')).toBe(late);
    expect(calls.take(newer)).toBe('newer');
  });

  it('answers undefined for numbers that are not waiting', () => {
    const calls = new PendingCalls<string>();
    calls.add('a');
    for (const number of [0, -1, 2, 999, Number.NaN, 1.5]) expect(calls.take(number)).toBeUndefined();
    calls.giveUp(999);
    expect(calls.size).toBe(1);
  });

  it('visits each call still waiting with its number, not those answered or given up on', () => {
    const calls = new PendingCalls<string>();
    const numbers = ['a', 'b', 'c', 'd'].map((c) => calls.add(c));
    calls.take(numbers[0]!);
    calls.giveUp(numbers[2]!);
    const seen: Array<[string, number]> = [];
    calls.forEach((call, number) => seen.push([call, number]));
    expect(seen).toEqual([
      ['b', numbers[1]],
      ['d', numbers[3]],
    ]);
  });

  it('hands back every call still waiting when the connection is gone, not those given up on', () => {
    const calls = new PendingCalls<string>();
    const numbers = ['a', 'b', 'c', 'd'].map((c) => calls.add(c));
    calls.take(numbers[0]!);
    calls.giveUp(numbers[3]!);
    expect(calls.takeAll()).toEqual(['b', 'c']);
    expect(calls.size).toBe(0);
    expect(calls.take(numbers[1]!)).toBeUndefined();
  });
});
