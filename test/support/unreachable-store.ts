import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';

/** A port nothing listens on: bound once, then released. */
export async function refusingPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A TCP server that accepts connections and never says a word. */
export async function silentServer() {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    accepted: () => sockets.size,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export function assertOneLine(stderr: string, stdout: string): void {
  assert.equal(stdout, '');
  const lines = stderr.split('\n').filter((line) => line !== '');
  assert.equal(lines.length, 1, `expected one line on stderr, got:\n${stderr}`);
  assert.doesNotMatch(stderr, /\bat .*\.js:\d+/, 'no stack trace');
}
