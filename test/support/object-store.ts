import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { S3ObjectStore, type ObjectStoreSettings } from '../../src/store/files/object-store.js';
import { repoRoot } from './cli.js';

/**
 * The tests' object store: a one-node OpenStack Swift with s3api (scripts/object-store/start-swift.sh)
 * in GEX_TEST_SWIFT_DIR (default: the temp folder's gex-test-swift) on 127.0.0.1:GEX_TEST_SWIFT_PORT
 * (default 18089), started once for all test processes (flock) or found running; a fresh bucket per
 * test. Without Debian's swift packages the tests skip loudly.
 */

const run = promisify(execFile);
// as S3ObjectStore does: the SDK release pinned for Node 20 warns of its successors on every client
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const SCRIPT = path.join(repoRoot, 'scripts', 'object-store', 'start-swift.sh');
export const SWIFT_DIR = process.env.GEX_TEST_SWIFT_DIR || path.join(os.tmpdir(), 'gex-test-swift');
export const SWIFT_PORT = Number(process.env.GEX_TEST_SWIFT_PORT || 18089);

export interface Swift {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}

let started: Promise<Swift | string> | undefined;

async function start(): Promise<Swift | string> {
  try {
    await run('sh', ['-c', 'command -v swift-proxy-server && command -v flock'], { timeout: 10_000 });
  } catch {
    return 'OpenStack Swift is not installed (Debian: apt-get install -y --no-install-recommends swift swift-proxy swift-account swift-container swift-object memcached)';
  }
  let stdout: string;
  try {
    ({ stdout } = await run('flock', ['-o', '-w', '60', `${SWIFT_DIR}.lock`, SCRIPT, SWIFT_DIR, String(SWIFT_PORT)], {
      timeout: 60_000,
    }));
  } catch (error) {
    const e = error as { stderr?: string; message?: string; code?: number };
    // exit 3: something it needs is missing here; anything else is a fault the test run must show
    if (e.code === 3) return `Swift cannot run here: ${(e.stderr ?? '').trim()}`;
    throw new Error(`${SCRIPT} failed: ${(e.stderr ?? e.message ?? '').trim()}`, { cause: error });
  }
  const values = new Map(
    stdout
      .split('\n')
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)] as const),
  );
  const value = (name: string): string => {
    const found = values.get(name);
    if (!found) throw new Error(`${SCRIPT} printed no ${name}: ${stdout}`);
    return found;
  };
  return {
    endpoint: value('AWS_ENDPOINT_URL'),
    region: value('AWS_REGION'),
    accessKeyId: value('AWS_ACCESS_KEY_ID'),
    secretAccessKey: value('AWS_SECRET_ACCESS_KEY'),
  };
}

/** The running Swift, started once per process, or why it cannot run here (the bench prints it and skips). */
export function swiftOrReason(): Promise<Swift | string> {
  started ??= start();
  return started;
}

/** The running Swift, started once per test process; skips the test (loudly) when Swift is absent. */
export async function swiftOrSkip(context: Mocha.Context): Promise<Swift> {
  const swift = await swiftOrReason();
  if (typeof swift === 'string') {
    console.warn(`\n  !!! SKIPPED (object store tests): ${swift}\n`);
    return context.skip();
  }
  return swift;
}

export function swiftClient(swift: Swift): S3Client {
  return new S3Client({
    endpoint: swift.endpoint,
    region: swift.region,
    forcePathStyle: true,
    credentials: { accessKeyId: swift.accessKeyId, secretAccessKey: swift.secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

export function swiftSettings(swift: Swift, bucket: string, prefix = ''): ObjectStoreSettings {
  return {
    bucket,
    prefix,
    endpoint: swift.endpoint,
    region: swift.region,
    forcePathStyle: true,
    credentials: { accessKeyId: swift.accessKeyId, secretAccessKey: swift.secretAccessKey },
  };
}

export interface TestBucket {
  name: string;
  store: S3ObjectStore;
  client: S3Client;
  /** deletes every object and the bucket */
  remove(): Promise<void>;
}

/** A new bucket of its own (gex-test-…) and a store on it under `prefix`. */
export async function freshBucket(swift: Swift, prefix = ''): Promise<TestBucket> {
  const name = `gex-test-${randomBytes(6).toString('hex')}`;
  const client = swiftClient(swift);
  await client.send(new CreateBucketCommand({ Bucket: name }));
  const store = new S3ObjectStore(swiftSettings(swift, name, prefix));
  return {
    name,
    store,
    client,
    async remove() {
      store.close();
      for (let token: string | undefined; ;) {
        const page = await client.send(new ListObjectsV2Command({ Bucket: name, ContinuationToken: token }));
        for (const o of page.Contents ?? []) await client.send(new DeleteObjectCommand({ Bucket: name, Key: o.Key }));
        if (!page.IsTruncated) break;
        token = page.NextContinuationToken;
      }
      await client.send(new DeleteBucketCommand({ Bucket: name }));
      client.destroy();
    },
  };
}
