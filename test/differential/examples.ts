import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { ApiAnswer, ApiRequest } from './api-model.js';
import type { ApiPlayer } from './run-case.js';

/**
 * GE's documented examples as differential cases. An examples root holds one folder per example
 * (`config.json`, optionally `in/`) and recorded exchanges anywhere below it: `NAME.request`
 * ("METHOD /target", then CRLF CRLF and the body), `NAME.response`, optionally
 * `NAME.responseCode`, `NAME.responseHeaders` and `NAME.requestHeaders` ("Name: value" lines that
 * must match; `*` = any value). A request matches on method, exact target and body.
 */
interface Exchange {
  request: string;
  requestHeaders: [string, string][];
  status: number;
  responseHeaders: Record<string, string>;
  body: Buffer;
}

export interface ExampleFolder {
  name: string;
  dir: string;
}

/** The examples of a root: folders holding config.json, in name order. */
export async function listExamples(root: string): Promise<ExampleFolder[]> {
  const names = (await readdir(root, { withFileTypes: true }))
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  const found: ExampleFolder[] = [];
  for (const name of names) {
    if (await exists(path.join(root, name, 'config.json'))) found.push({ name, dir: path.join(root, name) });
  }
  return found;
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch {
    return false;
  }
}

const optional = (file: string) => readFile(file, 'utf8').catch(() => '');

function headerLines(text: string): [string, string][] {
  return text
    .split('\n')
    .map((line): [string, string] | null => {
      const colon = line.indexOf(':');
      return colon > 0 ? [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()] : null;
    })
    .filter((x): x is [string, string] => x !== null);
}

/** Every recorded exchange below the root (files directly in the root are not exchanges). */
export async function loadRecordings(root: string): Promise<Exchange[]> {
  const exchanges: Exchange[] = [];
  const walk = async (dir: string, depth: number): Promise<void> => {
    for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(full, depth + 1);
      else if (depth > 0 && entry.name.endsWith('.request')) {
        const base = full.slice(0, -'.request'.length);
        const responseHeaders = Object.fromEntries(headerLines(await optional(`${base}.responseHeaders`)));
        exchanges.push({
          request: await readFile(full, 'utf8'),
          requestHeaders: headerLines(await optional(`${base}.requestHeaders`)),
          status: Number.parseInt((await optional(`${base}.responseCode`)).trim(), 10) || 200,
          responseHeaders:
            Object.keys(responseHeaders).length > 0 ? responseHeaders : { 'Content-Type': 'application/json' },
          body: await readFile(`${base}.response`).catch(() => Buffer.alloc(0)),
        });
      }
    }
  };
  await walk(root, 0);
  return exchanges;
}

/** Plays recorded exchanges; unmatched requests get 404 with a JSON message. */
export function replay(exchanges: Exchange[]): ApiPlayer {
  return (request: ApiRequest & { headers?: [string, string][] }): ApiAnswer => {
    const id = `${request.method} ${request.target}\r\n\r\n${request.body}`.trim();
    const match = exchanges.find(
      (ex) =>
        ex.request === id &&
        ex.requestHeaders.every(([name, value]) =>
          request.headers?.some(([n, v]) => n === name && (value === '*' || v === value)),
        ),
    );
    if (!match)
      return {
        status: 404,
        body: JSON.stringify({ message: `Unknown request ${id}` }),
        headers: { 'Content-Type': 'application/json' },
      };
    return { status: match.status, body: match.body, headers: match.responseHeaders };
  };
}

/**
 * The recorded API's host (`mock-server`, port 80) in a configuration, pointed at the local server:
 * as a base URL, as a `host:port` value (for user functions) and as an `address`/`port` pair.
 */
export function pointAtServer(config: string, origin: string): string {
  const { hostname, port } = new URL(origin);
  let text = config
    .replace(/http:\/\/mock-server(:80)?\//g, `${origin}/`)
    .replace(/"mock-server:80"/g, `"${hostname}:${port}"`);
  if (/"address":\s*"mock-server"/.test(text))
    text = text
      .replace(/"address":\s*"mock-server"/g, `"address": "${hostname}"`)
      .replace(/"port":\s*"80"/g, `"port": "${port}"`);
  return text;
}

/** The example's data folder, its recorded server address replaced by the local server's. */
export async function exampleFolder(example: ExampleFolder): Promise<(origin: string) => Map<string, string | Buffer>> {
  const config = await readFile(path.join(example.dir, 'config.json'), 'utf8');
  const extra = new Map<string, Buffer>();
  const walk = async (dir: string, rel: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      if (entry.isDirectory()) await walk(path.join(dir, entry.name), `${rel}/${entry.name}`);
      else extra.set(`${rel}/${entry.name}`, await readFile(path.join(dir, entry.name)));
    }
  };
  await walk(path.join(example.dir, 'in'), 'in');
  return (origin) => new Map<string, string | Buffer>([['config.json', pointAtServer(config, origin)], ...extra]);
}
