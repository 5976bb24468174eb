import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InstanceLog } from '../../shared/logs/instance-log.js';
import { REQUEST_PATH_WRITE_AT_ONCE } from '../../shared/protocol/frames.js';
import { WIRE_VERSION } from '../../shared/protocol/hello.js';
import { ThreadServer, type WrongVersion } from '../../shared/protocol/thread-server.js';
import type { ActorTable } from '../scheduling/actor-table.js';

export interface ThreadEndpoint {
  server: ThreadServer;
  /** Where actor threads dial the router (an abstract socket name on Linux). */
  socketPath: string;
  /** The secret a thread presents in its hello. */
  token: string;
}

/** The socket actor threads dial: a thread that says hello joins the actor table. */
export async function openThreadServer(log: InstanceLog, actors: ActorTable): Promise<ThreadEndpoint> {
  const token = randomBytes(24).toString('base64url');
  const socketPath =
    process.platform === 'linux'
      ? `\0anvil-${process.pid}-${randomBytes(6).toString('hex')}`
      : join(await mkdtemp(join(tmpdir(), 'anvil-')), 'router.sock');
  const server = new ThreadServer(
    socketPath,
    token,
    refuseOtherVersion(log),
    (hello, conduit, reader) => actors.threadArrived(hello, conduit, reader),
    REQUEST_PATH_WRITE_AT_ONCE,
  );
  await server.listen();
  return { server, socketPath, token };
}

function refuseOtherVersion(log: InstanceLog): WrongVersion {
  return (hello) =>
    log.error(
      {
        cell: hello.cell,
        actor: hello.actor,
        thread: hello.thread,
        version: hello.version,
        routerVersion: WIRE_VERSION,
      },
      `refused an actor thread of cell ${hello.cell}: it speaks wire version ${hello.version}, this router speaks ${WIRE_VERSION} (the cell runs another build of anvil)`,
    );
}
