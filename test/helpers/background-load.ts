import type { Reply, TestInstance } from './instance.js';

export interface BackgroundLoad {
  /** Every reply so far, in the order they came. */
  readonly replies: Reply[];
  /** Statuses of every reply so far. */
  statuses(): number[];
  /** Stops sending and waits for the requests in flight. */
  stop(): Promise<void>;
}

/** `workers` clients sending `path` back to back until stopped: a neighbour kept busy during a test. */
export function backgroundLoad(anvil: TestInstance, path: string, workers = 4): BackgroundLoad {
  let running = true;
  const replies: Reply[] = [];
  const loops = Array.from({ length: workers }, async () => {
    while (running) replies.push(await anvil.request(path));
  });
  return {
    replies,
    statuses: () => replies.map((r) => r.status),
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}
