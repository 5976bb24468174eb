import { request, type Agent } from 'undici';
import type { ApiRecord } from '../deploy/registry/registry.js';
import type { DeployTarget } from './dotenv.js';
import { localhostAgent } from './localhost-dispatcher.js';
import { CliError, formatBytes } from './output.js';

type Method = 'GET' | 'PUT' | 'POST' | 'DELETE';

/**
 * The management API of SPEC §6 as the CLI calls it: `DEPLOY_ENDPOINT_<ENV>` (the URL of
 * `/anvil/api` on an admin host) with `public-host` and `public-host-key` on every call. Every
 * failure becomes a `CliError` that says what the server answered and what to check.
 */
export class ManagementClient {
  private readonly agent: Agent = localhostAgent();

  constructor(readonly target: DeployTarget) {}

  async close(): Promise<void> {
    await this.agent.close().catch(() => {});
  }

  async getApi(key: string): Promise<ApiRecord> {
    return (await this.call('GET', `/${encodeURIComponent(key)}`, { key })) as ApiRecord;
  }

  /** The keys of the host's APIs. */
  async listKeys(): Promise<string[]> {
    return (await this.call('GET', '', {})) as string[];
  }

  /** The API's last request log lines (oldest first), filtered as `GET …/logs` filters them. */
  async logLines(key: string, filter: URLSearchParams): Promise<unknown[]> {
    const answer = (await this.call('GET', `/${encodeURIComponent(key)}/logs?${filter}`, { key })) as {
      lines: unknown[];
    };
    return answer.lines;
  }

  /** Follows the API's request log (Server-Sent Events): `onLine` gets each new line's JSON, until the stream ends. */
  async followLog(key: string, filter: URLSearchParams, onLine: (line: unknown) => void): Promise<void> {
    const { target } = this;
    const url = `${target.endpoint}/${encodeURIComponent(key)}/logs?${filter}&follow=1`;
    const response = await request(url, { headers: this.headers(), dispatcher: this.agent, bodyTimeout: 0 }).catch(
      (error: unknown) => {
        throw this.unreachable(url, error);
      },
    );
    if (response.statusCode !== 200) {
      const text = await response.body.text();
      throw this.failure('GET', url, response.statusCode, parseJson(text), text, { key });
    }
    let pending = '';
    for await (const chunk of response.body) {
      pending += (chunk as Buffer).toString('utf8');
      let end: number;
      while ((end = pending.indexOf('\n\n')) !== -1) {
        const event = pending.slice(0, end);
        pending = pending.slice(end + 2);
        for (const line of event.split('\n'))
          if (line.startsWith('data: ')) onLine(parseJson(line.slice(6)) ?? { unreadable: line.slice(6) });
      }
    }
  }

  /** The endpoints (`<verb> <path>`) the key's current release serves; null when the host has no API with that key. */
  async findEndpoints(key: string): Promise<string[] | null> {
    let described: { paths?: Record<string, Record<string, unknown>> };
    try {
      described = (await this.call('GET', `/${encodeURIComponent(key)}/openapi.json`, { key })) as typeof described;
    } catch (error) {
      if (error instanceof CliError && error.fields.status === 404) return null;
      throw error;
    }
    return Object.entries(described.paths ?? {}).flatMap(([path, operations]) =>
      Object.keys(operations).map((verb) => `${verb} ${path}`),
    );
  }

  /** PUT `{active, release, public}`: publish, disable and rollback are all this call. */
  async putApi(key: string, change: { active: boolean; release: string; public: boolean }): Promise<void> {
    await this.call('PUT', `/${encodeURIComponent(key)}`, {
      key,
      body: JSON.stringify(change),
      contentType: 'application/json',
    });
  }

  /** DELETE: the API, its releases and its data (the server refuses while it is active: 409). */
  async removeApi(key: string): Promise<void> {
    await this.call('DELETE', `/${encodeURIComponent(key)}`, { key });
  }

  /** POST a `.tar.gz`: `{key, release}` of the new release. */
  async deploy(archive: Buffer): Promise<{ key: string; release: string }> {
    return (await this.call('POST', '', { body: archive, contentType: 'application/gzip' })) as {
      key: string;
      release: string;
    };
  }

  private async call(
    method: Method,
    path: string,
    options: { key?: string; body?: string | Buffer; contentType?: string },
  ): Promise<unknown> {
    const { target } = this;
    const url = `${target.endpoint}${path}`;
    const headers = this.headers();
    if (options.contentType !== undefined) headers['content-type'] = options.contentType;
    let status: number;
    let text: string;
    try {
      const response = await request(url, { method, headers, body: options.body, dispatcher: this.agent });
      status = response.statusCode;
      text = await response.body.text();
    } catch (error) {
      throw this.unreachable(url, error);
    }
    const json = parseJson(text);
    if (status >= 200 && status < 300) return json;
    throw this.failure(method, url, status, json, text, options);
  }

  private headers(): Record<string, string> {
    return { 'public-host': this.target.publicHost, 'public-host-key': this.target.key, accept: 'application/json' };
  }

  private unreachable(url: string, error: unknown): CliError {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const code = (error as { code?: string }).code ?? cause?.code;
    return new CliError(
      `cannot reach ${url} (${this.target.names.endpoint}): ${code ?? (error as Error).message}${code === 'ECONNREFUSED' ? ' — is the instance running?' : ''}`,
    );
  }

  private failure(
    method: Method,
    url: string,
    status: number,
    json: unknown,
    text: string,
    options: { key?: string; body?: string | Buffer },
  ): CliError {
    const { target } = this;
    const body = (json ?? {}) as { error?: unknown; errors?: unknown };
    const serverErrors = Array.isArray(body.errors) ? body.errors.map(String) : [];
    const message = typeof body.error === 'string' ? body.error : text.trim().slice(0, 200) || `HTTP ${status}`;
    const fields = { status, url };
    switch (status) {
      case 400:
        return method === 'POST'
          ? new CliError(
              `the server refused the deploy (400): ${serverErrors.length || 1} error(s)`,
              serverErrors.length > 0 ? serverErrors : [message],
              fields,
            )
          : new CliError(
              `the server refused the request (400): ${message}`,
              serverErrors.length > 1 ? serverErrors : [],
              fields,
            );
      case 401:
        return new CliError(
          `401 Unauthorized: ${url} refused public host "${target.publicHost}" with its key; check ${target.names.publicHost} and ${target.names.key}`,
          [],
          fields,
        );
      case 404:
        if (options.key !== undefined && /^unknown API/.test(message)) {
          return new CliError(
            `no API "${options.key}" on public host ${target.publicHost} (${target.env})`,
            [],
            fields,
          );
        }
        if (/^unknown release/.test(message)) return new CliError(message, [], fields);
        return new CliError(
          `404 from ${url}: ${message} (is ${target.names.endpoint} the URL of /anvil/api on an admin host?)`,
          [],
          fields,
        );
      case 409:
        return new CliError(
          `${options.key ?? 'the API'} is active on public host ${target.publicHost} (${target.env}): disable it first (anvil disable ${options.key ?? '<key>'} ${target.env}), then remove it`,
          [],
          fields,
        );
      case 413: {
        const size = Buffer.isBuffer(options.body) ? ` (${formatBytes(options.body.length)})` : '';
        return new CliError(
          `413: the archive${size} is larger than the server accepts (its --upload-limit): ${message}`,
          [],
          fields,
        );
      }
      default:
        return new CliError(`${method} ${url} answered ${status}: ${message}`, serverErrors, fields);
    }
  }
}

/** Runs `work` with a client for `target`, closing its connections afterwards. */
export async function withClient<T>(target: DeployTarget, work: (client: ManagementClient) => Promise<T>): Promise<T> {
  const client = new ManagementClient(target);
  try {
    return await work(client);
  } finally {
    await client.close();
  }
}

/** The JSON of `text`, or undefined when it is empty or not JSON. */
function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
