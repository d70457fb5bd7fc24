import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { runExtraction } from '../../support/extraction.js';

/** A private CA, a server certificate for 127.0.0.1 and a client certificate, made with openssl. */
async function certificates(dir: string) {
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  ssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=gex test CA',
  );
  await writeFile(path.join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1\n');
  for (const name of ['server', 'client']) {
    ssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
      '-subj',
      `/CN=${name === 'server' ? '127.0.0.1' : 'gex client'}`,
    );
    const ext = name === 'server' ? ['-extfile', 'server.ext'] : [];
    ssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${name}.pem`,
      '-days',
      '2',
      ...ext,
    );
  }
  const read = (f: string) => readFile(path.join(dir, f), 'utf8');
  return {
    ca: await read('ca.pem'),
    serverCert: await read('server.pem'),
    serverKey: await read('server.key'),
    client: (await read('client.pem')) + (await read('client.key')),
  };
}

describe('TLS: a private CA and a client certificate (api.caCertificate, api.#clientCertificate)', function () {
  this.timeout(30_000);
  let dir: string;
  let server: https.Server;
  let url: string;
  let pem: Awaited<ReturnType<typeof certificates>>;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-tls-'));
    pem = await certificates(dir);
    server = https.createServer(
      { key: pem.serverKey, cert: pem.serverCert, ca: pem.ca, requestCert: true, rejectUnauthorized: true },
      (req, res) => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(
          JSON.stringify([{ client: (req.socket as import('node:tls').TLSSocket).getPeerCertificate().subject.CN }]),
        );
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  after(async () => {
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });

  it('trusts the given CA and presents the client certificate', async () => {
    const run = await runExtraction({
      api: { baseUrl: url, caCertificate: pem.ca, '#clientCertificate': pem.client },
      config: { outputBucket: 'b', jobs: [{ endpoint: 'me' }] },
    });
    assert.equal(run.files.get('b.me'), '"client"\n"gex client"\n');
  });

  it('refuses the server without the CA (verification stays on)', async () => {
    await assert.rejects(
      runExtraction({ api: { baseUrl: url }, config: { jobs: [{ endpoint: 'me' }] } }),
      /GET https:\/\/127\.0\.0\.1:\d+\/me failed: .*(self-signed|unable to verify|certificate)/i,
    );
  });
});

describe('GE infrastructure gex does not offer', () => {
  it('refuses sshProxy instead of ignoring it', async () => {
    const base = { api: { baseUrl: 'http://127.0.0.1:1/' }, config: { jobs: [{ endpoint: 'x' }] } };
    await assert.rejects(
      runExtraction({ ...base, sshProxy: { host: 'h', user: 'u', '#privateKey': 'k' } }),
      /parameters\.sshProxy: an SSH tunnel is not supported by gex/,
    );
  });
});
