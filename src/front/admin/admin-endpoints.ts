/**
 * Every endpoint of the admin host under `/anvil`, declared once: the admin router matches them
 * (admin-router.ts), admin-routes.ts gives each its handler, and docs/operate.md's endpoint table
 * is generated from them (endpoints-doc.ts). `auth`: `host` takes a public host's credentials
 * (`public-host`, `public-host-key`), `metrics` checks its own (loopback or a bearer token),
 * `none` takes none (the console's files hold no data). `:key` is an API key; `*` the rest of the
 * path. A GET endpoint answers HEAD too.
 */
export const ADMIN_ENDPOINTS = [
  {
    id: 'health',
    method: 'GET',
    path: '/anvil/health',
    auth: 'none',
    doc: '200 while serving, 503 while starting or draining',
    see: '[Behind a load balancer](#behind-a-load-balancer)',
  },
  {
    id: 'metrics',
    method: 'GET',
    path: '/anvil/metrics',
    auth: 'metrics',
    doc: 'Prometheus text',
    see: '[Metrics](#metrics-logs-and-anvil-bench)',
  },
  {
    id: 'consoleRoot',
    method: 'GET',
    path: '/anvil/console',
    auth: 'none',
    doc: 'the operator console: redirects to `/anvil/console/`',
    see: '[The console](#the-console)',
  },
  {
    id: 'consoleFile',
    method: 'GET',
    path: '/anvil/console/*',
    auth: 'none',
    doc: "the console's static files",
    see: '[The console](#the-console)',
  },
  {
    id: 'overview',
    method: 'GET',
    path: '/anvil/overview',
    auth: 'host',
    doc: 'the instance and every API of the host: status, release, req/s, p50/p99, error rate, 429s, sandbox breaches, jobs, the last 60 s of requests',
    see: '[Operator JSON](#operator-json-overview-and-stats)',
  },
  {
    id: 'audit',
    method: 'GET',
    path: '/anvil/audit',
    auth: 'host',
    doc: 'the audit log of management actions (`limit`, `before`, `api`, `action`)',
    see: '[The audit log](security.md#the-audit-log)',
  },
  {
    id: 'listApis',
    method: 'GET',
    path: '/anvil/api',
    auth: 'host',
    doc: "the host's API keys",
    see: '[the walkthrough](../README.md#a-five-minute-walkthrough)',
  },
  {
    id: 'deploy',
    method: 'POST',
    path: '/anvil/api',
    auth: 'host',
    doc: 'deploy an API folder (a .tar.gz or multipart upload)',
    see: '[the walkthrough](../README.md#a-five-minute-walkthrough)',
  },
  {
    id: 'readApi',
    method: 'GET',
    path: '/anvil/api/:key',
    auth: 'host',
    doc: 'an API with its releases',
    see: '[the walkthrough](../README.md#a-five-minute-walkthrough)',
  },
  {
    id: 'updateApi',
    method: 'PUT',
    path: '/anvil/api/:key',
    auth: 'host',
    doc: 'publish, disable or roll back: `{"active", "release", "public"}`',
    see: '[the walkthrough](../README.md#a-five-minute-walkthrough)',
  },
  {
    id: 'deleteApi',
    method: 'DELETE',
    path: '/anvil/api/:key',
    auth: 'host',
    doc: 'delete a disabled API, its releases and its data',
    see: '[the walkthrough](../README.md#a-five-minute-walkthrough)',
  },
  {
    id: 'openApi',
    method: 'GET',
    path: '/anvil/api/:key/openapi.json',
    auth: 'host',
    doc: "the OpenAPI 3.1 description of the API's current release",
    see: '[the walkthrough](../README.md#a-five-minute-walkthrough)',
  },
  {
    id: 'stats',
    method: 'GET',
    path: '/anvil/api/:key/stats',
    auth: 'host',
    doc: 'an API per route template (`window=1m|5m`), and a 1-second series of five minutes for charts',
    see: '[Operator JSON](#operator-json-overview-and-stats)',
  },
  {
    id: 'logs',
    method: 'GET',
    path: '/anvil/api/:key/logs',
    auth: 'host',
    doc: "an API's request log: the last lines, or live as Server-Sent Events with `follow=1`; filters `status`, `route`, `text`",
    see: "[An API's request log](#an-apis-request-log-on-the-admin-host)",
  },
  {
    id: 'jobCounts',
    method: 'GET',
    path: '/anvil/api/:key/jobs',
    auth: 'host',
    doc: "an API's jobs per state",
    see: 'below',
  },
  {
    id: 'jobAction',
    method: 'POST',
    path: '/anvil/api/:key/jobs/:action',
    auth: 'host',
    doc: '`requeue-failed`: put its failed jobs back to run; `flush`: remove its waiting, delayed, completed and failed jobs',
    see: 'below',
  },
] as const;

export type AdminEndpoint = (typeof ADMIN_ENDPOINTS)[number];
export type EndpointId = AdminEndpoint['id'];
export type AdminAuth = AdminEndpoint['auth'];
