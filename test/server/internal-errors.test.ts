import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { createLogger } from '../../src/common/logger.js';
import { buildServer } from '../../src/server/app.js';
import type { ProjectFiles } from '../../src/store/files/project-files.js';
import type { ServerBackend } from '../../src/server/backend.js';
import type { ConfigStore } from '../../src/store/config-store.js';
import type { ProjectTokens } from '../../src/store/embedded/tokens.js';
import type { ProjectTables, StorageJobs } from '../../src/store/tables/index.js';
import type { TokenInfo } from '../../src/store/types.js';

const TOKEN: TokenInfo = {
  id: 7,
  description: 'stub',
  projectId: 1,
  projectName: 'p',
  readOnly: false,
  canManageTokens: false,
  runner: false,
  created: '2024-01-01T00:00:00+0000',
};

/** A backend whose store fails with an unexpected (non-store) error. */
const failingBackend: ServerBackend = {
  authenticate: async (token) => (token === 'good' ? TOKEN : null),
  session: () =>
    ({
      listConfigurations: async () => {
        throw new Error('disk I/O error at /var/lib/secret-path');
      },
    }) as unknown as ConfigStore,
  tables: () => ({}) as ProjectTables,
  storageJobs: () => ({}) as StorageJobs,
  files: () => ({}) as ProjectFiles,
  tokens: () => ({}) as ProjectTokens,
  listComponents: async () => [],
  getComponent: async () => undefined,
  changeMarker: async () => null,
  ping: async () => undefined,
};

describe('server: unexpected failures', () => {
  let app: FastifyInstance;
  let url: string;
  const logLines: string[] = [];
  before(async () => {
    const sink = new Writable({
      write(chunk, _encoding, done) {
        logLines.push(String(chunk));
        done();
      },
    });
    const logger = createLogger({ level: 'error', format: 'json', stdout: sink, stderr: sink });
    app = await buildServer({ backend: failingBackend, logger });
    url = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(async () => app.close());

  it('answers 500 with an exceptionId, logs the cause under it and does not leak it', async () => {
    const res = await fetch(`${url}/v2/storage/branch/default/components/ex-generic-v2/configs`, {
      headers: { 'X-StorageApi-Token': 'good' },
    });
    assert.equal(res.status, 500);
    assert.equal(res.headers.get('content-type'), 'application/json');
    const body = (await res.json()) as {
      error: string;
      code: string;
      status: string;
      exceptionId: string;
      gexCode: string;
    };
    assert.equal(body.code, 'storage.internalError');
    assert.equal(body.gexCode, 'GEX_INTERNAL', "gex's catalogue code beside Keboola's");
    assert.equal(body.status, 'error');
    assert.equal(body.error.includes('secret-path'), false);
    const logged = logLines.find((line) => line.includes(body.exceptionId));
    assert.ok(logged, 'the log line carries the exceptionId');
    assert.match(logged, /disk I\/O error/);
    assert.equal(JSON.parse(logged).code, 'GEX_INTERNAL', 'the log line carries the same code as the body');
  });
});
