import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { MarkerSlots, SandboxMarker, markerFile } from '../../src/cell/process/sandbox-markers.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

function file(): string {
  const dir = mkdtempSync(join(tmpdir(), 'anvil-markers-'));
  dirs.push(dir);
  const path = join(dir, 'cell-0.markers');
  markerFile.reset(path);
  return path;
}

it('names the actors whose thread entered tenant code this turn, and no longer once the turn is over', async () => {
  const path = file();
  const slots = new MarkerSlots(path);
  const a = new SandboxMarker(slots.fd, slots.take('localhost/dev/a@r1'));
  const b = new SandboxMarker(slots.fd, slots.take('localhost/dev/b@r1'));
  expect(markerFile.flagged(path)).toEqual([]);
  a.enter();
  a.enter();
  expect(markerFile.flagged(path)).toEqual(['localhost/dev/a@r1']);
  await new Promise((r) => setImmediate(r));
  expect(markerFile.flagged(path)).toEqual([]);
  b.enter();
  expect(markerFile.flagged(path)).toEqual(['localhost/dev/b@r1']);
  slots.close();
});

it('reuses a released slot for the next thread, under its own name', () => {
  const path = file();
  const slots = new MarkerSlots(path);
  const first = slots.take('localhost/dev/a@r1');
  slots.release(first);
  const again = slots.take('localhost/dev/c@r2');
  expect(again).toBe(first);
  new SandboxMarker(slots.fd, again).enter();
  expect(markerFile.flagged(path)).toEqual(['localhost/dev/c@r2']);
  slots.close();
});

it('reads nothing from a missing or reset file', () => {
  expect(markerFile.flagged('/nonexistent/cell.markers')).toEqual([]);
  const path = file();
  const slots = new MarkerSlots(path);
  new SandboxMarker(slots.fd, slots.take('localhost/dev/a@r1')).enter();
  markerFile.reset(path);
  expect(markerFile.flagged(path)).toEqual([]);
  slots.close();
});

it("names, on a shared thread's one slot, the actor that entered last, and no one once the turn is over", async () => {
  const path = file();
  const slots = new MarkerSlots(path);
  const slot = slots.take();
  const a = new SandboxMarker(slots.fd, slot, 'localhost/dev/a-long-name@r1');
  const b = new SandboxMarker(slots.fd, slot, 'localhost/dev/b@r1');
  expect(markerFile.flagged(path)).toEqual([]);
  a.enter();
  expect(markerFile.flagged(path)).toEqual(['localhost/dev/a-long-name@r1']);
  b.enter();
  expect(markerFile.flagged(path)).toEqual(['localhost/dev/b@r1']);
  a.enter();
  expect(markerFile.flagged(path)).toEqual(['localhost/dev/a-long-name@r1']);
  await new Promise((r) => setImmediate(r));
  expect(markerFile.flagged(path)).toEqual([]);
  b.enter();
  expect(markerFile.flagged(path)).toEqual(['localhost/dev/b@r1']);
  await new Promise((r) => setImmediate(r));
  slots.release(slot);
  expect(markerFile.flagged(path)).toEqual([]);
  slots.close();
});
