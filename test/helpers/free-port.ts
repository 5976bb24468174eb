import { createServer } from 'node:net';

/** A TCP port free on 127.0.0.1 right now (for servers a test starts that cannot take port 0). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}
