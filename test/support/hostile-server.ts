import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';

const MiB = 1024 * 1024;

/**
 * A gzip bomb streamed without ever building it: a JSON array opener, then one full-flushed deflate
 * block of 1 MiB of spaces (~1 KB compressed) repeated `decompressedMiB` times. Full flushes make
 * the blocks independent, so the repetition is a valid deflate stream (10 MB of gzip → 10 GiB).
 */
export function gzipBombParts() {
  const flush = { finishFlush: zlib.constants.Z_FULL_FLUSH, level: 9 };
  const header = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]);
  return {
    head: Buffer.concat([header, zlib.deflateRawSync(Buffer.from('['), flush)]),
    block: zlib.deflateRawSync(Buffer.alloc(MiB, 0x20), flush),
  };
}

export interface HostileServer {
  url: string;
  close(): Promise<void>;
}

/** Serves a gzip bomb of `decompressedMiB` MiB on every request. */
export async function startGzipBombServer(decompressedMiB: number): Promise<HostileServer> {
  const { head, block } = gzipBombParts();
  const serve = async (res: http.ServerResponse): Promise<void> => {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' });
    let open = true;
    res.on('close', () => (open = false));
    res.write(head);
    for (let i = 0; i < decompressedMiB && open; i++) {
      if (!res.write(block)) await drained(res);
    }
    res.end();
  };
  const server = http.createServer((_req, res) => void serve(res).catch(() => res.destroy()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function drained(res: http.ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
