import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { load } from 'js-yaml';
import { parseObjectStoreUrl } from '../../src/store/files/object-store.js';
import { repoRoot, runGex } from '../support/cli.js';

/**
 * deploy/compose.object-store.yaml, checked without a Docker engine: its services agree with each
 * other (the bucket gex is given is the one the one-shot `bucket` service creates, the credentials
 * and the database are the other services'), and gex's command line and environment, as compose
 * would pass them, are read by the real `gex serve` up to its bucket check.
 */

const FILE = path.join(repoRoot, 'deploy', 'compose.object-store.yaml');

interface Service {
  image?: string;
  build?: { context: string; dockerfile: string };
  command?: string[] | string;
  entrypoint?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  ports?: string[];
}

/** Compose's interpolation with nothing set: `${X:-default}` → default, `${X:?message}` → `given[X]`, `$$` → `$`. */
function interpolate(text: string, given: Record<string, string>): string {
  return text
    .replace(/\$\{([A-Z_]+):([-?])([^}]*)\}/g, (_, name: string, kind: string, rest: string) => {
      if (kind === '-') return rest;
      const value = given[name];
      if (value === undefined) throw new Error(`${name} is required by the compose file: ${rest}`);
      return value;
    })
    .replace(/\$\$/g, '$');
}

describe('deploy/compose.object-store.yaml (gex serve + PostgreSQL + MinIO)', () => {
  const key = 'ab'.repeat(32);
  let services: Record<string, Service>;

  before(async () => {
    const text = await readFile(FILE, 'utf8');
    assert.throws(() => interpolate(text, {}), /GEX_MASTER_KEY is required/);
    services = (load(interpolate(text, { GEX_MASTER_KEY: key })) as { services: Record<string, Service> }).services;
  });

  it('starts gex after PostgreSQL is healthy and the bucket is created, from the repository Dockerfile', () => {
    assert.deepEqual(Object.keys(services).sort(), ['bucket', 'db', 'gex', 'minio']);
    const gex = services.gex;
    assert.deepEqual(gex.build, { context: '..', dockerfile: 'Dockerfile' });
    assert.deepEqual(gex.depends_on, {
      db: { condition: 'service_healthy' },
      bucket: { condition: 'service_completed_successfully' },
    });
    assert.deepEqual(services.bucket.depends_on, { minio: { condition: 'service_healthy' } });
    assert.ok(services.db.healthcheck && services.minio.healthcheck);
    assert.deepEqual(gex.command?.slice(0, 3), ['serve', '--host', '0.0.0.0']);
  });

  it("gives gex the bucket the bucket service creates, MinIO's endpoint and credentials, and the db service", () => {
    const env = services.gex.environment!;
    const minio = services.minio.environment!;
    const script = (services.bucket.command as string[]).join(' ');
    const created = /mc mb --ignore-existing local\/([a-z0-9.-]+)/.exec(script);
    assert.ok(created, script);
    assert.match(script, /mc alias set local http:\/\/minio:9000 "\$MINIO_ROOT_USER" "\$MINIO_ROOT_PASSWORD"/);
    assert.equal(services.bucket.environment!.MINIO_ROOT_USER, minio.MINIO_ROOT_USER);
    assert.equal(services.bucket.environment!.MINIO_ROOT_PASSWORD, minio.MINIO_ROOT_PASSWORD);

    const settings = parseObjectStoreUrl(env.GEX_FILE_STORAGE, env);
    assert.equal(settings.bucket, created[1]);
    assert.equal(settings.endpoint, 'http://minio:9000');
    assert.equal(settings.forcePathStyle, true);
    assert.equal(settings.region, 'us-east-1');
    assert.equal(env.AWS_ACCESS_KEY_ID, minio.MINIO_ROOT_USER);
    assert.equal(env.AWS_SECRET_ACCESS_KEY, minio.MINIO_ROOT_PASSWORD);
    // MinIO refuses to start with a shorter root password
    assert.ok(minio.MINIO_ROOT_PASSWORD.length >= 8);

    const store = new URL(env.GEX_STORE);
    const db = services.db.environment!;
    assert.equal(store.protocol, 'postgres:');
    assert.equal(store.hostname, 'db');
    assert.equal(decodeURIComponent(store.password), db.POSTGRES_PASSWORD);
    assert.equal(store.pathname, `/${db.POSTGRES_DB}`);
    assert.equal(env.GEX_MASTER_KEY, key);
  });

  it("is read by gex serve as compose passes it: the command's options and the environment reach the bucket check", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-compose-'));
    try {
      const env = services.gex.environment!;
      const args = services.gex.command as string[];
      // the database and MinIO are not here: a SQLite store, and an endpoint that refuses at once
      const result = await runGex(args, {
        ...env,
        GEX_STORE: path.join(dir, 'store.sqlite'),
        AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:1',
        AWS_ENDPOINT_URL: '',
        AWS_PROFILE: '',
        AWS_SESSION_TOKEN: '',
        GEX_LOG_FORMAT: 'text',
      });
      const output = result.stdout + result.stderr;
      assert.equal(result.code, 1, output);
      assert.match(output, /cannot be reached while opening the bucket s3:\/\/gex-files/);
      assert.equal(output.includes(env.AWS_SECRET_ACCESS_KEY), false, 'no secret in the output');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
