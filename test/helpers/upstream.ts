import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real upstream for Http / Pull tests: a node:http server on port 0 that counts every request
 * it receives (per path and in total) and answers:
 *
 * - `/static.css`      text/css, so CacheStatic keeps it
 * - `/redirect`        302 to the cloud metadata address http://169.254.169.254/latest/meta-data
 * - `/redirect-local`  302 to this server's own `/landing` (counted: a followed redirect shows)
 * - `/slow`            answers after 2 s
 * - `/status/<n>`      status n, `x-upstream: yes`, and hop-by-hop headers that must not pass back
 * - `/missing`         404 `{"error":"nope"}`
 * - `/count`           `{"hits": <hits of /count so far>, "query": {...}}`
 * - anything else      echoes `{method, path, query, rawQuery, headers, body}` as JSON
 *
 * It listens on `::` (dual stack), so it is reachable as 127.0.0.1, [::1], localhost and 0.0.0.0:
 * a refused egress target that got through anyway would show up in the counters.
 */
export interface Upstream {
  readonly port: number;
  /** Requests received so far, all paths. */
  total(): number;
  /** Requests received so far for one path (query ignored). */
  hits(path: string): number;
  close(): Promise<void>;
}

export async function startUpstream(): Promise<Upstream> {
  const counts = new Map<string, number>();
  let total = 0;
  const timers = new Set<NodeJS.Timeout>();
  let port = 0;

  const handle = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://upstream');
    const path = url.pathname;
    total++;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(value));
    };

    if (path === '/static.css') {
      res.writeHead(200, { 'content-type': 'text/css' }).end('body { color: red; }');
    } else if (path === '/redirect') {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data' }).end();
    } else if (path === '/redirect-local') {
      res.writeHead(302, { location: `http://127.0.0.1:${port}/landing` }).end();
    } else if (path === '/slow') {
      const timer = setTimeout(() => {
        timers.delete(timer);
        json(200, { slow: true });
      }, 2_000);
      timers.add(timer);
    } else if (path.startsWith('/status/')) {
      const status = Number(path.slice('/status/'.length));
      res.writeHead(status, {
        'content-type': 'application/json',
        'x-upstream': 'yes',
        connection: 'x-up-secret',
        'x-up-secret': '1',
      });
      res.end(JSON.stringify({ status }));
    } else if (path === '/missing') {
      json(404, { error: 'nope' });
    } else if (path === '/count') {
      json(200, { hits: counts.get('/count'), query: Object.fromEntries(url.searchParams) });
    } else {
      json(200, {
        method: req.method,
        path,
        query: Object.fromEntries(url.searchParams),
        rawQuery: url.search.slice(1),
        headers: req.headers,
        body: body.toString('utf8'),
      });
    }
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => handle(req, res, Buffer.concat(chunks)));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: 0, host: '::', ipv6Only: false }, () => resolve());
  });
  port = (server.address() as AddressInfo).port;

  return {
    port,
    total: () => total,
    hits: (path) => counts.get(path) ?? 0,
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
