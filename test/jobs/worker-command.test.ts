import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runGex } from '../support/cli.js';

/** `gex worker` and the job options of `gex serve`: bad input is refused before anything is opened. */
describe('gex worker: refusals', function () {
  this.timeout(30_000);
  const noStore = { GEX_STORE: '' };
  const cases: Array<[string, string[], RegExp, NodeJS.ProcessEnv?]> = [
    ['a SQLite store', ['worker', '--store', 'jobs.sqlite'], /PostgreSQL store .*gex serve --workers N/],
    ['no store at all', ['worker'], /needs the store: --store postgres:/],
    [
      '--concurrency 0',
      ['worker', '--store', 'postgres://nobody@127.0.0.1:1/x', '--concurrency', '0'],
      /--concurrency takes a whole number from 1 to 256/,
    ],
    [
      '--retries -1',
      ['worker', '--store', 'postgres://nobody@127.0.0.1:1/x', '--retries', '-1'],
      /--retries takes a whole number from 0 to 10/,
    ],
    [
      '--metrics-listen without a port',
      ['worker', '--store', 'postgres://nobody@127.0.0.1:1/x', '--metrics-listen', '0.0.0.0'],
      /--metrics-listen takes HOST:PORT, got 0\.0\.0\.0: e\.g\. --metrics-listen 127\.0\.0\.1:9464/,
    ],
    [
      '--metrics-listen with a port out of range',
      ['worker', '--store', 'postgres://nobody@127.0.0.1:1/x', '--metrics-listen', '127.0.0.1:65536'],
      /--metrics-listen takes HOST:PORT, its port a whole number from 0 to 65535 \(0: any free port\), got 65536/,
    ],
    [
      '--metrics-listen with no host',
      ['worker', '--store', 'postgres://nobody@127.0.0.1:1/x', '--metrics-listen', ':9464'],
      /--metrics-listen takes HOST:PORT, got no host in :9464/,
    ],
    [
      '--metrics-listen with a host that is no name',
      ['worker', '--store', 'postgres://nobody@127.0.0.1:1/x', '--metrics-listen', 'evil host\n:9464'],
      /--metrics-listen takes HOST:PORT, got .*which is no host name or IP address/,
    ],
    [
      '--metrics-listen given empty',
      ['worker', '--store', 'postgres://nobody@127.0.0.1:1/x', '--metrics-listen', ''],
      /--metrics-listen needs a value, and it was given an empty one/,
    ],
    [
      '--file-storage that is no s3:// location (before the store is opened)',
      ['worker', '--store', 'postgres://nobody@127.0.0.1:1/x', '--file-storage', 'https://bucket'],
      /The file storage must be s3:\/\/BUCKET\[\/PREFIX\]/,
    ],
    [
      '--file-storage given empty',
      ['worker', '--store', 'postgres://nobody@127.0.0.1:1/x', '--file-storage', ''],
      /--file-storage needs a value, and it was given an empty one/,
    ],
    [
      '--job-retention-days 0 on serve',
      ['serve', '--store', 'x.sqlite', '--job-retention-days', '0'],
      /--job-retention-days takes a whole number of days from 1/,
    ],
    [
      '--job-timeout 1.5 on serve',
      ['serve', '--store', 'x.sqlite', '--job-timeout', '1.5'],
      /--job-timeout takes a whole number of seconds/,
    ],
    [
      'a --public-url that is not http(s) on serve',
      ['serve', '--store', 'x.sqlite', '--public-url', 'javascript:alert(1)'],
      /--public-url must be an http:\/\/ or https:\/\/ URL/,
    ],
    [
      'a --public-url with a query on worker',
      ['worker', '--store', 'postgres://nobody@127.0.0.1:1/x', '--public-url', 'https://gex.example.com/?t=1'],
      /--public-url must be a URL without credentials, query or fragment/,
    ],
    [
      'an SMTP relay without a sender on serve',
      ['serve', '--store', 'x.sqlite'],
      /\$GEX_SMTP_URL is set but \$GEX_SMTP_FROM is not/,
      { GEX_SMTP_URL: 'smtp://gex:pa55word@smtp.example.com:587' },
    ],
    [
      'a bad SMTP relay on worker (its password not repeated)',
      ['worker', '--store', 'postgres://nobody@127.0.0.1:1/x'],
      /GEX_SMTP_URL must be/,
      { GEX_SMTP_URL: 'ftp://gex:pa55word@smtp.example.com', GEX_SMTP_FROM: 'gex@example.com' },
    ],
  ];
  for (const [what, args, message, env] of cases) {
    it(`refuses ${what} (exit 1, says how to fix it, creates nothing)`, async () => {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-worker-'));
      try {
        const r = await runGex(args, { ...noStore, ...env }, { cwd: dir });
        assert.equal(r.code, 1, r.stderr);
        assert.match(r.stdout + r.stderr, message);
        assert.equal((r.stdout + r.stderr).includes('pa55word'), false, 'no password in the output');
        assert.deepEqual(await readdir(dir), [], 'no store file created');
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  }
});
