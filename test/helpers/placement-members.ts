import type { TestInstance } from './instance.js';
import { waitFor } from './wait-for.js';

/** An instance taking part in placement (cluster mode). */
export interface Member {
  instance: TestInstance;
  /** The instance's id in the placement tables (and in x-anvil-served-by). */
  id: string;
  internalPort: number;
  /** `$.memory.anvil-localhost` on this instance. */
  url: string;
}

/** What the instance logged when it joined the placement. */
export function memberOf(instance: TestInstance): Member {
  const line = instance.logLines().find((l) => l.msg === 'placement: this instance takes part in placement');
  if (line === undefined) throw new Error(`no placement line in the log:\n${instance.output()}`);
  return {
    instance,
    id: line.instance,
    internalPort: Number(new URL(line.internalUrl).port),
    url: `http://localhost:${instance.port}`,
  };
}

/** The owner of the API behind `path` once every member's answer names the same one (x-anvil-served-by). */
export async function agreedOwner(members: readonly Member[], path: string, what: string): Promise<Member> {
  const servedBy = await waitFor(
    async () => {
      const seen = await Promise.all(
        members.map(async (m) => (await m.instance.request(path)).headers['x-anvil-served-by']),
      );
      return seen.every((s) => typeof s === 'string' && s === seen[0]) ? (seen[0] as string) : null;
    },
    { what, timeoutMs: 15_000 },
  );
  const owner = members.find((m) => m.id === servedBy);
  if (owner === undefined) throw new Error(`the owner ${servedBy} is none of the members`);
  return owner;
}
