import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { InstanceOptions, StartedInstance } from '../front/instance/instance-options.js';
import { DEFAULT_AUDIT_RETENTION } from '../front/audit/audit-store.js';
import { DEFAULT_BUS_CALLS_PER_REQUEST } from '../engine/call-budget.js';
import { MAX_DEFAULT_CONNECTIONS, MAX_DEFAULT_CONNECTIONS_PER_CLIENT } from '../front/edge/connection-limits.js';
import { DEFAULT_MAX_JSON_DEPTH } from '../shared/http/json-depth.js';
import { DEFAULT_FOLLOW_LIMITS } from '../shared/logs/follow/follow-limits.js';
import { DEFAULT_QUOTAS } from '../shared/quotas/api-quotas.js';
import { DEFAULT_HOST_DISK_BYTES } from '../front/scheduling/host-disk-watch.js';
import { DEFAULT_HOST_FAULT_LIMITS } from '../front/scheduling/host-faults.js';
import { DEFAULT_MAX_QUEUED_DEPLOYS } from '../deploy/releases/deploy-admission.js';
import { readInstanceEnvironment, type InstanceEnvironment } from './environment.js';
import { byteSize, byteSizeOrZero, duration, envName, integer, trustedProxies } from './options.js';
import { optionsFromEnvironment } from './option-env.js';
import { checkStartFlags, instanceOptions, type StartFlags } from './start-options.js';

export function registerStart(program: Command): void {
  optionsFromEnvironment(program.command('start'))
    .description('Start an instance: the router, its cells, and the APIs of the registry (and of --apis).')
    .option('--apis <dir>', 'deploy every sub-folder with an api.yaml at boot (a new release only when it changed)')
    .option('--publish', 'make the --apis APIs active and public', false)
    .option('--watch', 'redeploy an --apis folder when its files change', false)
    .option('--port <n>', 'HTTP port (0: any free port; PORT is read too when ANVIL_PORT is not set)', integer('--port', 0, 65535), 8080)
    .option('--listen <address>', 'address to listen on', '127.0.0.1')
    .option('--data <dir>', 'data directory (registry, releases, API data)', './data')
    .option('--env <name>', 'env of the default public host (dev, pro, …)', envName, 'dev')
    .option('--cells <n>', 'cell processes (default: number of CPUs)', integer('--cells', 1, 256), availableParallelism())
    .option('--spare-threads <n>', 'actor threads each cell keeps loaded for the next API that needs one (0: a cold start loads its thread)', integer('--spare-threads', 0, 8), 2)
    .option('--max-cells <n>', 'cell processes at most, quarantine and low-priority cells included (default: --cells + 8)', integer('--max-cells', 3, 512))
    .option('--body-limit <size>', 'largest request body an API accepts (413 above)', byteSize('--body-limit'), 1024 * 1024)
    .option('--max-json-depth <n>', 'deepest nesting of a JSON request body (400 deeper)', integer('--max-json-depth', 1, 100_000), DEFAULT_MAX_JSON_DEPTH)
    .option('--max-bus-calls <n>', 'bus calls (LocalCall, Pull, Push, Http to this instance) one request from outside may cause in all, the calls its calls make included (508 beyond)', integer('--max-bus-calls', 1, 1_000_000), DEFAULT_BUS_CALLS_PER_REQUEST)
    .option('--upload-limit <size>', 'largest deploy archive (413 above)', byteSize('--upload-limit'), 50 * 1024 * 1024)
    .option('--deploy-timeout <duration>', 'time a deploy may spend unpacking and validating its files (400 after)', duration('--deploy-timeout'), 10_000)
    .option('--max-queued-deploys <n>', 'deploys of one public host under way at once: received, waiting for the deploy worker or in it (429 above)', integer('--max-queued-deploys', 1, 10_000), DEFAULT_MAX_QUEUED_DEPLOYS)
    .option('--headers-timeout <duration>', 'time allowed to receive request headers', duration('--headers-timeout'), 10_000)
    .option('--request-timeout <duration>', 'time an API has to answer (504 after)', duration('--request-timeout'), 30_000)
    .option('--drain-timeout <duration>', 'on SIGTERM, time allowed for in-flight work', duration('--drain-timeout'), 30_000)
    .option('--drain-delay <duration>', 'on SIGTERM, time /anvil/health answers 503 while requests are still served, so a balancer stops sending', duration('--drain-delay', 0), 1_000)
    .option('--proxy-protocol', 'every connection starts with a PROXY protocol v2 header (HAProxy send-proxy-v2) naming the client', false)
    .option('--max-connections <n>', `client connections at most (default: three quarters of the open-files limit, at most ${MAX_DEFAULT_CONNECTIONS}); beyond it an idle or half-open one of the client holding the most is closed, else 503`, integer('--max-connections', 1, 10_000_000))
    .option('--max-connections-per-client <n>', `connections one client address may hold (default: a quarter of --max-connections, at most ${MAX_DEFAULT_CONNECTIONS_PER_CLIENT}; --trusted-proxy peers are exempt); beyond it 429`, integer('--max-connections-per-client', 1, 10_000_000))
    .option('--trusted-proxy <cidrs>', 'believe x-forwarded-for from these peers (addresses or CIDRs, comma-separated)', trustedProxies)
    .option('--placement-lease <duration>', 'cluster mode (DATABASE_URL): how long an owner instance holds an API that keeps data on its disk; a dead owner\'s APIs move after it', duration('--placement-lease', 500), 10_000)
    .option('--internal-listen <address>', 'cluster mode: address of the internal listener other instances forward requests to (default: --listen)')
    .option('--internal-port <n>', 'cluster mode: port of the internal listener (0: any free port; others find it in the control plane)', integer('--internal-port', 0, 65535), 0)
    .option('--internal-advertise <address>', 'cluster mode: the address other instances dial for the internal listener (default: --internal-listen)')
    .option('--max-threads <n>', 'threads per API at most', integer('--max-threads', 1, 64), 2)
    .option('--shared-threads <n>', 'threads per cell that serve many quiet APIs at once, each in its own isolate (0: every API gets threads of its own)', integer('--shared-threads', 0, 64), 1)
    .option('--thread-concurrency <n>', 'requests in flight per thread before the mailbox is used', integer('--thread-concurrency', 1, 4096), 64)
    .option('--mailbox <n>', 'requests waiting per API before 503', integer('--mailbox', 0, 1_000_000), 256)
    .option('--idle-timeout <duration>', 'an idle API thread is stopped after this long', duration('--idle-timeout'), 30_000)
    .option('--max-isolate-memory <size>', 'most memory an API may give its custom directives\' isolates (api.yaml limits.memoryMb)', byteSize('--max-isolate-memory'), 256 * 1024 * 1024)
    .option('--max-directive-cpu <duration>', 'most CPU time per custom directive call an API may set (limits.cpuMs)', duration('--max-directive-cpu'), 1_000)
    .option('--max-directive-wall <duration>', 'most wall time per custom directive call an API may set (limits.wallMs)', duration('--max-directive-wall'), 30_000)
    .option('--job-concurrency <n>', 'jobs running at once (at most one per API)', integer('--job-concurrency', 1, 1024), 4)
    .option('--job-backoff <duration>', 'wait before the first retry of a failed job (then doubled)', duration('--job-backoff'), 1_000)
    .option('--job-lease <duration>', 'a run holds its job this long, renewed while it lives; a job whose instance died runs again after it', duration('--job-lease', 500), 10_000)
    .option('--max-job-payload <size>', 'largest job payload an API may queue (413 above; api.yaml limits.jobPayloadKb may ask for less)', byteSize('--max-job-payload'), DEFAULT_QUOTAS.jobPayloadBytes)
    .option('--max-queued-jobs <n>', 'jobs of an API queued and not finished (503 above; limits.queuedJobs)', integer('--max-queued-jobs', 1, 10_000_000), DEFAULT_QUOTAS.queuedJobs)
    .option('--max-queued-job-bytes <size>', 'payload bytes of an API\'s jobs queued and not finished, embedded queue (503 above; limits.queuedJobsKb)', byteSize('--max-queued-job-bytes'), DEFAULT_QUOTAS.queuedJobBytes)
    .option('--max-kv-bytes <size>', 'keys and values an API may keep in the key-value store (507 above; limits.kvKb)', byteSize('--max-kv-bytes'), DEFAULT_QUOTAS.kvBytes)
    .option('--max-log-file <size>', 'size of an API\'s log file before the next is opened (limits.logFileKb)', byteSize('--max-log-file'), DEFAULT_QUOTAS.logFileBytes)
    .option('--max-log-bytes <size>', 'all log files of an API together; the oldest go first (limits.logKb)', byteSize('--max-log-bytes'), DEFAULT_QUOTAS.logBytes)
    .option('--max-log-days <n>', 'days an API\'s log files are kept (limits.logDays)', integer('--max-log-days', 1, 3650), DEFAULT_QUOTAS.logDays)
    .option('--max-files-bytes <size>', 'disk an API\'s files may take (SaveFile, CachedFileSet; 507 above; limits.filesKb)', byteSize('--max-files-bytes'), DEFAULT_QUOTAS.filesBytes)
    .option('--max-database-bytes <size>', 'disk an API\'s SQLite database may take, file and write-ahead log together; the file holds at most half (507 above; limits.databaseKb)', byteSize('--max-database-bytes'), DEFAULT_QUOTAS.databaseBytes)
    .option('--max-host-disk <size>', 'disk a public host\'s data may take, all its APIs\' databases, files, caches and logs together; over it their writes are refused until deletes make room (507; 0: no total)', byteSizeOrZero('--max-host-disk'), DEFAULT_HOST_DISK_BYTES)
    .option('--response-buffer <size>', 'large response bodies the router holds for slow clients, in all; beyond it the slowest are cut', byteSize('--response-buffer'), 64 * 1024 * 1024)
    .option('--max-response-headers <n>', 'header lines of one API response, each set-cookie value one (500 above)', integer('--max-response-headers', 1, 10_000), DEFAULT_QUOTAS.responseHeaders)
    .option('--max-response-header-bytes <size>', 'bytes of the header lines of one API response (500 above)', byteSize('--max-response-header-bytes'), DEFAULT_QUOTAS.responseHeaderBytes)
    .option('--audit-days <n>', 'days the audit log keeps an entry', integer('--audit-days', 1, 36_500), DEFAULT_AUDIT_RETENTION.days)
    .option('--audit-rows <n>', 'entries the audit log keeps at most per public host, and apart for the instance-wide ones (the oldest go first)', integer('--audit-rows', 1, 100_000_000), DEFAULT_AUDIT_RETENTION.rows)
    .option('--host-abort-limit <n>', 'APIs of one public host that abort cells within --host-abort-window before all its APIs move to its quarantine cell (after its first, its APIs that start anew start there)', integer('--host-abort-limit', 1, 1000), DEFAULT_HOST_FAULT_LIMITS.aborts)
    .option('--host-abort-window <duration>', 'how long a cell abort counts towards moving all the APIs of its public host (which stays suspect for good after its first)', duration('--host-abort-window', 1_000), DEFAULT_HOST_FAULT_LIMITS.windowMs)
    .option('--log-followers <n>', 'clients following one API\'s request log live at once (429 beyond)', integer('--log-followers', 1, 1024), DEFAULT_FOLLOW_LIMITS.perApi)
    .option('--log-follow-buffer <size>', 'bytes a log follower may leave unread before it is dropped', byteSize('--log-follow-buffer'), DEFAULT_FOLLOW_LIMITS.bufferedBytes)
    .addHelpText('after', '\nEvery option can also be set by its environment variable, e.g. ANVIL_PORT=9000 or ANVIL_MAX_THREADS=4;\nthe command line wins.\n\nExample:\n  anvil start --apis apis --publish --port 8080\n')
    .action(async (flags: StartFlags, command: Command) => {
      // PORT, as platforms set it, when neither --port nor ANVIL_PORT says otherwise.
      if (command.getOptionValueSource('port') === 'default' && process.env.PORT !== undefined) flags.port = integer('PORT', 0, 65535)(process.env.PORT);
      const maxCells = checkStartFlags(flags);
      // The environment is read here, once: the instance gets it as options.
      const environment = readInstanceEnvironment();
      const envExplicit = command.getOptionValueSource('env') !== 'default';
      await start(instanceOptions(flags, maxCells, envExplicit, environment), environment);
    });
}

async function start(options: InstanceOptions, environment: InstanceEnvironment): Promise<void> {
  // Loaded here, not at the top: every other command starts without the router's modules.
  const [{ createInstanceLog }, { startInstance }] = await Promise.all([import('../shared/logs/instance-log.js'), import('../front/instance/start-instance.js')]);
  const log = createInstanceLog(environment.logLevel);
  // Taken before the instance starts: it answers (health included) before startInstance
  // resolves, and a SIGTERM in between must drain it, not kill it with its lock left behind.
  let started: ReturnType<typeof startInstance> | null = null;
  const shutdown = (signal: string) => {
    log.info({ signal }, 'draining');
    started!.then((instance) => instance.stop()).then(
      () => {
        log.info('stopped');
        process.exit(0);
      },
      (error: unknown) => {
        log.error({ error: String(error) }, 'stop failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  started = startInstance(options, log);
  let instance: StartedInstance;
  try {
    instance = await started;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    const { portHolder } = await import('./port-holder.js');
    const holder = portHolder(options.port);
    throw new Error(`port ${options.port} on ${options.listen} is already in use${holder === null ? '' : ` by ${holder}`}: stop it, or choose another port with --port (or ANVIL_PORT)`);
  }

  log.info({ port: instance.port, listen: options.listen, cells: options.cells }, 'listening');
  process.stderr.write(banner(options, instance, environment.publicHostKey !== null));
}

/** What a person starting the instance reads on stderr: where it serves, the hosts, the boot deploys. */
function banner(options: InstanceOptions, instance: StartedInstance, keyFromEnv: boolean): string {
  const origin = (host: string) => `http://${host}:${instance.port}`;
  const keyFile = resolve(options.dataDir, '.anvil/public-host-key');
  const lines = [
    '',
    `Anvil is serving on ${options.listen}:${instance.port} (${options.cells} cells, env ${instance.publicHost.env}).`,
    `  public host  ${origin(instance.publicHost.name)}/<api>/…`,
    `  admin host   ${origin(instance.adminHost)}/anvil/api   (headers public-host: ${instance.publicHost.name}, public-host-key: <key>)`,
    instance.generatedKey !== null
      ? `  public host key (shown once, stored in ${keyFile}): ${instance.generatedKey}`
      : `  public host key: ${keyFromEnv ? 'from ANVIL_PUBLIC_HOST_KEY' : `in ${keyFile}`}`,
  ];
  for (const api of instance.boot?.deployed ?? []) lines.push(`  api ${api.key.padEnd(20)} ${origin(instance.publicHost.name)}/${api.key}/   release ${api.release}${api.created ? ' (new)' : ''}`);
  for (const bad of instance.boot?.invalid ?? []) lines.push(`  skipped ${bad.folder}: ${bad.errors.length} error(s), first: ${bad.errors[0]}`);
  return lines.join('\n') + '\n\n';
}
