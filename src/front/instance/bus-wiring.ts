import type { ActorTable } from '../scheduling/actor-table.js';
import type { ApiDirectory } from '../scheduling/api-directory.js';
import { Bus } from '../scheduling/bus.js';
import type { Dispatcher } from '../scheduling/dispatcher.js';
import type { Metrics } from '../meters/metrics.js';

/** Calls between APIs that go through the router, and the threads' stats into the metrics. */
export function wireBus(directory: ApiDirectory, dispatcher: Dispatcher, actors: ActorTable, metrics: Metrics): Bus {
  const bus = new Bus(directory, dispatcher);
  actors.useBus(
    (caller, call, reply, offerPeer) => {
      metrics.busCalls.inc({ host: caller.host, api: caller.key });
      bus.call(caller, call, reply, offerPeer);
    },
    (spec, stats) => metrics.observeThread(spec.host, spec.key, stats),
  );
  return bus;
}
