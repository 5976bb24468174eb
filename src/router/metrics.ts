import type { IncomingMessage, ServerResponse } from 'node:http';
import { Counter, Gauge, Registry } from 'prom-client';
import { safeEqual } from '../security/safe-equal.js';

/**
 * The instance's Prometheus metrics (SPEC §6 `GET /anvil/metrics`), answered only to loopback
 * clients or to `authorization: Bearer <ANVIL_METRICS_TOKEN>`: tenants must not read each other's
 * figures. Labels are host and API key, never a raw path.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly connections = new Counter({ name: 'anvil_http_connections_total', help: 'TCP connections accepted by the router', registers: [this.registry] });
  readonly busCalls = new Counter({ name: 'anvil_bus_calls_total', help: 'Calls between APIs over the in-process bus', labelNames: ['host', 'api'], registers: [this.registry] });

  constructor(private readonly token: string | undefined) {}

  /** Job queue depth per API and state, read when metrics are scraped. */
  watchQueue(read: () => Promise<Array<{ host: string; api: string; counts: Record<string, number> }>>): void {
    new Gauge({
      name: 'anvil_job_queue_depth',
      help: 'Jobs per API and state',
      labelNames: ['host', 'api', 'state'],
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const { host, api, counts } of await read()) for (const [state, n] of Object.entries(counts)) this.set({ host, api, state }, n);
      },
    });
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!this.allowed(req)) {
      res.writeHead(401, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify({ error: 'Unauthorized' }));
      return;
    }
    const body = await this.registry.metrics();
    res.writeHead(200, { 'content-type': this.registry.contentType }).end(body);
  }

  private allowed(req: IncomingMessage): boolean {
    const auth = req.headers.authorization;
    if (this.token && typeof auth === 'string' && auth.startsWith('Bearer ')) return safeEqual(this.token, auth.slice(7).trim());
    const address = req.socket.remoteAddress ?? '';
    return address === '127.0.0.1' || address === '::1' || address === '::ffff:127.0.0.1';
  }
}
