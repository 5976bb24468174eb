import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { VerdictHold } from '../../src/front/scheduling/verdict-hold.js';

const holdOf = (waitMs = 60_000) => {
  const released: number[] = [];
  const hold = new VerdictHold(waitMs, () => released.push(Date.now()));
  return { hold, released };
};

describe('VerdictHold', () => {
  it('holds from a lost thread until its cell goes down', () => {
    const { hold, released } = holdOf();
    expect(hold.held).toBe(false);
    hold.threadLost(2, 7);
    expect(hold.held).toBe(true);
    hold.cellDown(1);
    expect(hold.held).toBe(true);
    hold.cellDown(2);
    expect(hold.held).toBe(false);
    expect(released).toHaveLength(1);
  });

  it('ends when the cell reports the thread exited (it died alone), also when that report came first', () => {
    const { hold, released } = holdOf();
    hold.threadLost(0, 1);
    hold.threadExited(0, 1);
    expect(hold.held).toBe(false);
    hold.threadExited(0, 2);
    hold.threadLost(0, 2);
    expect(hold.held).toBe(false);
    expect(released).toHaveLength(1);
  });

  it('waits for every lost thread', () => {
    const { hold } = holdOf();
    hold.threadLost(0, 1);
    hold.threadLost(1, 2);
    hold.cellDown(0);
    expect(hold.held).toBe(true);
    hold.threadExited(1, 2);
    expect(hold.held).toBe(false);
  });

  it('gives up after its wait when no news comes', async () => {
    const { hold, released } = holdOf(30);
    hold.threadLost(3, 1);
    await sleep(80);
    expect(hold.held).toBe(false);
    expect(released).toHaveLength(1);
  });

  it('remembers only a few early exits', () => {
    const { hold } = holdOf();
    for (let thread = 0; thread < 20; thread++) hold.threadExited(0, thread);
    hold.threadLost(0, 0);
    expect(hold.held).toBe(true);
    hold.threadLost(0, 19);
    hold.cellDown(0);
    expect(hold.held).toBe(false);
  });
});
