/**
 * Runs `work` now and then every `everyMs` after it settles (never two at once, so a slow answer
 * does not pile requests up), until stopped. `work` gets an AbortSignal that stopping aborts.
 */
export function poll(everyMs, work) {
  const controller = new AbortController();
  let timer = null;
  const tick = async () => {
    try {
      await work(controller.signal);
    } catch (error) {
      if (error?.name !== 'AbortError') console.warn('anvil console: poll failed', error);
    }
    if (!controller.signal.aborted) timer = setTimeout(tick, everyMs);
  };
  void tick();
  return {
    stop() {
      controller.abort();
      clearTimeout(timer);
    },
    /** Runs `work` again at once (after an action), keeping the rhythm from then on. */
    now() {
      clearTimeout(timer);
      void tick();
    },
  };
}
