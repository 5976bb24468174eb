/** What both consumers keep of their runs in flight: the count per API, and close()'s bounded wait. */

/** Runs in flight per API, for the `perApi` limit. */
export class RunsPerApi {
  private readonly runs = new Map<string, number>();

  of(api: string): number {
    return this.runs.get(api) ?? 0;
  }

  started(api: string): void {
    this.runs.set(api, this.of(api) + 1);
  }

  ended(api: string): void {
    const left = (this.runs.get(api) ?? 1) - 1;
    if (left > 0) this.runs.set(api, left);
    else this.runs.delete(api);
  }
}

/** Resolves when all the runs have ended, or after `timeoutMs`, whichever comes first. */
export async function waitForRuns(runs: Array<Promise<unknown>>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, timeoutMs));
  });
  await Promise.race([Promise.all(runs), timeout]);
  clearTimeout(timer);
}
