import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AdminHandlers } from './admin-router.js';
import { jobHandlers, type JobsEndpointDeps } from './jobs-endpoint.js';
import { managementHandlers, type ManagementDeps } from './management-api.js';
import { operatorHandlers } from './operator-api.js';
import type { OperatorSources } from './overview.js';
import { operatorViewHandlers, type OperatorViews } from './operator-views.js';

export interface AdminRoutesDeps {
  /** True once the instance serves (cells up), false while starting or draining. */
  ready(): boolean;
  /** Prometheus text; it checks its own access (throws a 401). */
  metrics(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** The console's files; `path` is the whole request path. */
  console(req: IncomingMessage, res: ServerResponse, path: string): Promise<void>;
  operator: OperatorSources;
  views: OperatorViews;
  jobs: JobsEndpointDeps;
  management: ManagementDeps;
}

/** The handler of every admin endpoint (admin-endpoints.ts declares them): the compiler checks none is missing. */
export function adminHandlers(deps: AdminRoutesDeps): AdminHandlers {
  return {
    health: () => {
      const ready = deps.ready();
      return { status: ready ? 200 : 503, body: { status: ready ? 'ok' : 'unavailable' } };
    },
    metrics: ({ req, res }) => deps.metrics(req, res),
    consoleRoot: ({ req, res }) => deps.console(req, res, '/anvil/console'),
    consoleFile: ({ req, res, params }) => deps.console(req, res, `/anvil/console/${params['*']}`),
    ...operatorHandlers(deps.operator),
    ...operatorViewHandlers(deps.views),
    ...jobHandlers(deps.jobs),
    ...managementHandlers(deps.management),
  };
}
