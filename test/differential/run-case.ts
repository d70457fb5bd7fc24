import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { answer, type ApiAnswer, type ApiRequest } from './api-model.js';
import { BASE_URL, type DiffCase } from './case-model.js';
import type { Engine } from './engines.js';
import { toJsonText } from './json-text.js';

export interface SentRequest {
  method: string;
  target: string;
  headers: [string, string][];
  body: string;
}

export interface SideResult {
  engine: string;
  code: number;
  timedOut: boolean;
  log: string;
  requests: SentRequest[];
  /** every file under out/, by its path relative to out/ */
  outputs: Map<string, Buffer>;
}

/** What a case's data folder holds: config.json and, when the case has one, in/state.json. */
export function dataFolderFiles(c: DiffCase, baseUrl: string): Map<string, string | Buffer> {
  const files = new Map<string, string | Buffer>();
  files.set('config.json', `{"parameters":${toJsonText(c.parameters).replaceAll(BASE_URL, baseUrl)}}`);
  if (c.state !== undefined) files.set('in/state.json', toJsonText(c.state));
  return files;
}

/** The API side of a run: the answer to the `index`-th request of a run, given the server's origin. */
export type ApiPlayer = (
  request: ApiRequest & { headers?: [string, string][] },
  index: number,
  origin: string,
) => ApiAnswer;

/** Runs a generated case: its data folder against its API model. */
export function runCase(c: DiffCase, engines: Engine[], workDir: string, timeoutMs: number): Promise<SideResult[]> {
  return runOnEngines(
    (origin) => dataFolderFiles(c, origin),
    (request, index, origin) => answer(c.api, request, index, origin),
    engines,
    workDir,
    timeoutMs,
  );
}

/**
 * Runs a data folder on each engine in turn against one local server playing the API, each on a
 * fresh copy of the same folder, and records what each sent and wrote.
 */
export async function runOnEngines(
  folder: (origin: string) => Map<string, string | Buffer>,
  play: ApiPlayer,
  engines: Engine[],
  workDir: string,
  timeoutMs: number,
): Promise<SideResult[]> {
  let log: SentRequest[] = [];
  let origin = '';
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('latin1');
      const headers: [string, string][] = [];
      for (let i = 0; i < req.rawHeaders.length; i += 2)
        headers.push([req.rawHeaders[i].toLowerCase(), req.rawHeaders[i + 1]]);
      const request: SentRequest = { method: req.method ?? '', target: req.url ?? '', headers, body };
      const reply = play(
        {
          method: request.method,
          target: request.target,
          body: Buffer.from(body, 'latin1').toString('utf8'),
          contentType: req.headers['content-type'],
          headers,
        },
        log.length,
        origin,
      );
      log.push(request);
      res.writeHead(reply.status, reply.headers);
      res.end(reply.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const results: SideResult[] = [];
    for (const engine of engines) {
      log = [];
      const dataDir = path.join(workDir, engine.name);
      await rm(dataDir, { recursive: true, force: true });
      for (const [name, text] of folder(origin)) {
        await mkdir(path.dirname(path.join(dataDir, name)), { recursive: true });
        await writeFile(path.join(dataDir, name), text);
      }
      const run = await engine.run(dataDir, timeoutMs);
      // beside the data folder, for a closer look at a kept case (--keep)
      await writeFile(`${dataDir}.log`, run.log);
      results.push({
        engine: engine.name,
        code: run.code,
        timedOut: run.timedOut,
        log: run.log,
        requests: log,
        outputs: await readOutputs(path.join(dataDir, 'out')),
      });
    }
    return results;
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

async function readOutputs(outDir: string): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  const walk = async (dir: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else files.set(path.relative(outDir, full), await readFile(full));
    }
  };
  await walk(outDir);
  return files;
}
