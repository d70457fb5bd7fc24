import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { rm } from 'node:fs/promises';
import { DataFolder } from '../../../src/extractor/data-folder.js';
import { extract } from '../../../src/extractor/extractor.js';
import { runGex } from '../../support/cli.js';
import { captureLogger, makeDataDir, readTables } from '../../support/extraction.js';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A real HTTP server on its own port (= its own origin) that records every request. */
async function origin(handle: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      handle(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    seen,
    port,
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const redirect = (res: http.ServerResponse, location: string, status = 302) => {
  res.writeHead(status, { Location: location });
  res.end();
};
const json = (res: http.ServerResponse, body: unknown) => {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
};

const API_KEY = 'k3y-from-a-hash-value';
const PLAIN_KEY = 'plain-key-typed-in-the-config';

/** Basic auth, a `#` value in a header, a plain api key, a cookie and a proxy credential. */
function parameters(baseUrl: string, job: Record<string, unknown> = { endpoint: 'items' }) {
  return {
    api: {
      baseUrl: `${baseUrl}/`,
      authentication: { type: 'basic' },
      http: {
        headers: {
          'X-Api-Key': { attr: '#apiKey' },
          'X-Plain-Key': PLAIN_KEY,
          Cookie: 'session=s3ss10n',
          'Proxy-Authorization': 'Basic cHJveHk6c2VjcmV0',
          Accept: 'application/json',
        },
      },
    },
    config: { '#username': 'user', '#password': 'pa55word', '#apiKey': API_KEY, outputBucket: 'r', jobs: [job] },
  };
}

async function run(config: unknown) {
  const dataDir = await makeDataDir(config);
  const capture = captureLogger();
  try {
    const input = await new DataFolder(dataDir).read();
    capture.masker.addFromConfig(input.parameters);
    const result = await extract(input, { dataDir, logger: capture.logger, now: () => 1700000000 });
    return { result, files: await readTables(dataDir), logs: capture.text() };
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

const CREDENTIAL_HEADERS = ['authorization', 'x-api-key', 'x-plain-key', 'cookie', 'proxy-authorization'];

describe('redirects: credentials never reach another origin', () => {
  let a: Awaited<ReturnType<typeof origin>>;
  let b: Awaited<ReturnType<typeof origin>>;

  beforeEach(async () => {
    b = await origin((_req, res) => json(res, [{ id: 2, from: 'b' }]));
    a = await origin((req, res) => {
      if (req.url === '/items') return redirect(res, `${b.url}/items`);
      if (req.url === '/same') return redirect(res, '/moved');
      if (req.url === '/moved') return json(res, [{ id: 1, from: 'a' }]);
      if (req.url === '/bounce') return redirect(res, `${b.url}/back`);
      if (req.url === '/post-307') return redirect(res, `${b.url}/post`, 307);
      if (req.url === '/post-302') return redirect(res, '/moved', 302);
      res.writeHead(404);
      res.end();
    });
  });
  afterEach(async () => {
    await a.close();
    await b.close();
  });

  it('a redirect from origin A to origin B: B gets no Authorization, api key, plain key, cookie or proxy credential', async () => {
    const { files, logs } = await run({ parameters: parameters(a.url) });
    // the redirect was followed: the data comes from B
    assert.equal(files.get('r.items'), '"id","from"\n"2","b"\n');
    assert.equal(a.seen.length, 1);
    // A got them (it is the configured API) ...
    for (const name of CREDENTIAL_HEADERS) assert.ok(a.seen[0].headers[name], `A should get ${name}`);
    // ... B none of them, under any name or in any value
    assert.equal(b.seen.length, 1);
    for (const name of CREDENTIAL_HEADERS) assert.equal(b.seen[0].headers[name], undefined, `B got ${name}`);
    const everything = JSON.stringify(b.seen[0]);
    for (const secret of [
      API_KEY,
      PLAIN_KEY,
      's3ss10n',
      Buffer.from('user:pa55word').toString('base64'),
      'cHJveHk6c2VjcmV0',
    ]) {
      assert.ok(!everything.includes(secret), `B saw ${secret}`);
    }
    // harmless headers still go
    assert.equal(b.seen[0].headers.accept, 'application/json');
    assert.match(String(b.seen[0].headers['user-agent']), /^gex\//);
    assert.match(
      logs,
      new RegExp(`Redirected from ${a.url} to another origin, ${b.url}: headers not sent there: .*x-api-key`),
    );
  });

  it('a same-origin redirect keeps every header', async () => {
    const { files } = await run({ parameters: parameters(a.url, { endpoint: 'same' }) });
    assert.equal(files.get('r.same'), '"id","from"\n"1","a"\n');
    assert.deepEqual(
      a.seen.map((s) => s.url),
      ['/same', '/moved'],
    );
    for (const name of CREDENTIAL_HEADERS)
      assert.equal(a.seen[1].headers[name], a.seen[0].headers[name], `${name} lost on a same-origin redirect`);
    assert.equal(a.seen[1].headers['x-api-key'], API_KEY);
    assert.equal(b.seen.length, 0);
  });

  it('once dropped, credentials stay dropped when B redirects back to A', async () => {
    await b.close();
    b = await origin((req, res) => (req.url === '/back' ? redirect(res, `${a.url}/moved`) : json(res, [])));
    await run({ parameters: parameters(a.url, { endpoint: 'bounce' }) });
    assert.deepEqual(
      a.seen.map((s) => s.url),
      ['/bounce', '/moved'],
    );
    for (const name of CREDENTIAL_HEADERS)
      assert.equal(a.seen[1].headers[name], undefined, `${name} came back after B`);
  });

  it('a 307 to another origin would resend the body: refused, B gets nothing', async () => {
    const config = {
      parameters: parameters(a.url, { endpoint: 'post-307', method: 'POST', params: { secret: { attr: '#apiKey' } } }),
    };
    await assert.rejects(run(config), (e: Error) => {
      assert.equal(e.name, 'RedirectRefused');
      assert.match(
        e.message,
        new RegExp(
          `${a.url}/post-307 answered 307, which would resend the request body to another origin \\(${b.url}\\)`,
        ),
      );
      return true;
    });
    assert.equal(a.seen[0].body, `{"secret":"${API_KEY}"}`);
    assert.equal(b.seen.length, 0);
  });

  it('a 302 answer to a POST is followed with a GET without the body, as Guzzle does', async () => {
    await run({ parameters: parameters(a.url, { endpoint: 'post-302', method: 'POST', params: { q: 1 } }) });
    assert.deepEqual(
      a.seen.map((s) => `${s.method} ${s.url} ${s.body}`),
      ['POST /post-302 {"q":1}', 'GET /moved '],
    );
  });
});

describe('redirects: image_parameters.allowed_hosts is checked on every hop', () => {
  let a: Awaited<ReturnType<typeof origin>>;
  let b: Awaited<ReturnType<typeof origin>>;

  before(async () => {
    b = await origin((_req, res) => json(res, [{ id: 2 }]));
    a = await origin((req, res) => {
      if (req.url === '/items') return redirect(res, `${b.url}/items?token=x`);
      if (req.url === '/same') return redirect(res, '/moved');
      return json(res, [{ id: 1 }]);
    });
  });
  after(async () => {
    await a.close();
    await b.close();
  });

  const config = (endpoint: string) => ({
    parameters: { api: { baseUrl: `${a.url}/` }, config: { outputBucket: 'r', jobs: [{ endpoint }] } },
    image_parameters: { allowed_hosts: [{ host: '127.0.0.1', port: String(a.port) }] },
  });

  it('a redirect to a host that is not allowed fails the run with exit 1, naming the host; B gets no request', async () => {
    const dir = await makeDataDir(config('items'));
    try {
      b.seen.length = 0;
      const result = await runGex(['run', '--data-dir', dir, '--log-format', 'text']);
      assert.equal(result.code, 1, result.stderr);
      const output = result.stdout + result.stderr;
      assert.match(
        output,
        new RegExp(
          `redirected to ${b.url}/items: the host 127\\.0\\.0\\.1:${b.port} is not in the allowed hosts whitelist \\(image_parameters\\.allowed_hosts\\)`,
        ),
      );
      assert.doesNotMatch(output, /\n\s+at /, 'no stack trace');
      assert.equal(b.seen.length, 0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a redirect within the allowed host is followed', async () => {
    const { files } = await run(config('same'));
    assert.equal(files.get('r.same'), '"id"\n"1"\n');
  });
});

describe('allowed_hosts: next-page URLs from responses stay within the whitelist', () => {
  let a: Awaited<ReturnType<typeof origin>>;
  let b: Awaited<ReturnType<typeof origin>>;

  before(async () => {
    b = await origin((_req, res) => json(res, { items: [{ id: 3 }] }));
    a = await origin((req, res) => {
      // the API (not the configuration) names the next page: on another host, or on itself
      if (req.url === '/away') return json(res, { items: [{ id: 1 }], next: `${b.url}/steal?page=2` });
      if (req.url === '/home') return json(res, { items: [{ id: 1 }], next: `${a.url}/home2` });
      return json(res, { items: [{ id: 2 }] });
    });
  });
  after(async () => {
    await a.close();
    await b.close();
  });

  const config = (endpoint: string) => ({
    parameters: {
      api: {
        baseUrl: `${a.url}/`,
        pagination: { method: 'response.url', urlKey: 'next' },
        http: { headers: { 'X-Api-Key': { attr: '#key' } } },
      },
      config: { outputBucket: 'r', '#key': 'k3y-0f-a', jobs: [{ endpoint, dataField: 'items' }] },
    },
    image_parameters: { allowed_hosts: [{ host: '127.0.0.1', port: String(a.port) }] },
  });

  it('a next page on a host outside the whitelist fails the run (exit 1) before anything is sent there', async () => {
    const dir = await makeDataDir(config('away'));
    try {
      b.seen.length = 0;
      const result = await runGex(['run', '--data-dir', dir, '--log-format', 'text']);
      assert.equal(result.code, 1, result.stderr);
      assert.match(
        result.stdout + result.stderr,
        new RegExp(
          `Refusing GET ${b.url}/steal: the host 127\\.0\\.0\\.1:${b.port} is not in the allowed hosts whitelist`,
        ),
      );
      assert.doesNotMatch(result.stdout + result.stderr, /page=2/, 'the query of the refused URL is not printed');
      assert.equal(b.seen.length, 0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('next pages on the whitelisted host are followed', async () => {
    const { files } = await run(config('home'));
    assert.equal(files.get('r.home'), '"id"\n"1"\n"2"\n');
  });
});
