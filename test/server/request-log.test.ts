import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/common/logger.js';
import { maskUrlSignatures } from '../../src/common/url-signature.js';
import { buildServer } from '../../src/server/app.js';
import type { ServerBackend } from '../../src/server/backend.js';
import { loggableUrl } from '../../src/server/operations/request-log.js';
import type { ConfigStore } from '../../src/store/config-store.js';
import type { ProjectTokens } from '../../src/store/embedded/tokens.js';
import type { ProjectFiles } from '../../src/store/files/project-files.js';
import { StoreError } from '../../src/store/store-error.js';
import type { ProjectTables, StorageJobs } from '../../src/store/tables/index.js';
import type { TokenInfo } from '../../src/store/types.js';

const TOKEN = '1-2-abcdefghijABCDEFGHIJ0123456789_-abcdefgh';

describe('server: the URL of a request log line', () => {
  it('keeps the path and the short plain values of the list options', () => {
    assert.equal(
      loggableUrl('/v2/storage/components?include=configuration,rows&limit=10&isDeleted=0'),
      '/v2/storage/components?include=configuration,rows&limit=10&isDeleted=0',
    );
  });

  it('hides every other query value, a list option value that is long, encoded or a token, and names that hold a token', () => {
    assert.equal(
      loggableUrl('/x?token=abc&%23password=p&changeDescription=hello'),
      '/x?token=[hidden]&%23password=[hidden]&changeDescription=[hidden]',
    );
    assert.equal(
      loggableUrl(`/x?limit=${'9'.repeat(65)}&include=a%2Cb&offset=${TOKEN}&${TOKEN}=1&${TOKEN}`),
      '/x?limit=[hidden]&include=[hidden]&offset=[hidden]&[hidden]=[hidden]&[hidden]',
    );
  });

  it('hides a path holding a token: the request’s own (also percent-encoded) or anything shaped like one', () => {
    assert.equal(loggableUrl(`/v2/storage/${TOKEN}`), '[hidden]');
    assert.equal(loggableUrl('/v2/storage/%73ecret-own-token', 'secret-own-token'), '[hidden]');
    assert.equal(loggableUrl('/v2/storage/short', 'sh'), '/v2/storage/short', 'too short a token text to search for');
  });

  it('cannot forge or break a line: line-breaking and invisible characters are escaped, long URLs cut', () => {
    assert.equal(loggableUrl('/a\u2028b\u202e'), '"/a\\u2028b\\u202e"');
    assert.equal(loggableUrl('/a%0Ab'), '/a%0Ab');
    const long = loggableUrl(`/${'a'.repeat(5000)}`);
    assert.equal(long.length, 301);
    assert.ok(long.endsWith('…'));
  });
});

/** A backend whose configurations fail naming a pre-signed address (as an SDK's error might). */
function leakingBackend(signature: string): ServerBackend {
  const token: TokenInfo = {
    id: 7,
    description: 'stub',
    projectId: 1,
    projectName: 'p',
    readOnly: false,
    canManageTokens: false,
    runner: false,
    created: '2024-01-01T00:00:00+0000',
  };
  return {
    authenticate: async (text) => (text === 'good-token-text' ? token : null),
    session: () =>
      ({
        listConfigurations: async () => {
          throw new Error(
            `GET http://bucket.example/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F${signature}c&X-Amz-Signature=${signature}s failed`,
          );
        },
        getConfiguration: async () => {
          throw StoreError.notFound(`Not at http://bucket.example/k?X-Amz-Signature=${signature}n&x=1`);
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
}

describe('server: pre-signed signatures never reach the request log, an error line or an answer', () => {
  for (const format of ['text', 'json'] as const)
    it(`masks them in every URL and error of a request (${format} lines)`, async () => {
      const signature = `sig${format}0a1b2c3d4e5f`;
      const lines: string[] = [];
      const sink = new Writable({
        write(chunk, _encoding, done) {
          lines.push(String(chunk));
          done();
        },
      });
      const logger = createLogger({ level: 'debug', format, stdout: sink, stderr: sink });
      const app = await buildServer({ backend: leakingBackend(signature), logger });
      const url = await app.listen({ port: 0, host: '127.0.0.1' });
      const answers: string[] = [];
      try {
        const configs = '/v2/storage/branch/default/components/ex-generic-v2/configs';
        const attacks = [
          // a pre-signed address's own query, sent to gex
          `${configs}?X-Amz-Signature=${signature}1&X-Amz-Credential=AKIA%2F${signature}2&X-Amz-Security-Token=${signature}3&Signature=${signature}4&AWSAccessKeyId=${signature}5`,
          // one pasted into the path, encoded once and twice, and into a parameter's name
          `${configs}/x%3FX-Amz-Signature%3D${signature}6`,
          `${configs}/x%253FX-Amz-Signature%253D${signature}7`,
          `${configs}?a%26X-Amz-Signature%3D${signature}8=1&limit=5`,
          `/v2/storage/no-such-route/X-Amz-Signature=${signature}9`,
          `/no/such/path%3FSignature%3D${signature}10`,
          // the store's error names a pre-signed address: a 500 and a 404
          configs,
          `${configs}/one`,
        ];
        for (const path of attacks) {
          const response = await fetch(`${url}${path}`, { headers: { 'X-StorageApi-Token': 'good-token-text' } });
          answers.push(`${response.status} ${await response.text()}`);
        }
      } finally {
        await app.close();
      }
      const log = lines.join('');
      assert.match(log, /failed \(exception-/, 'the 500 was logged');
      assert.ok(lines.filter((l) => l.includes('request')).length >= 8, log);
      assert.equal(log.includes(signature), false, log);
      assert.equal(answers.join('\n').includes(signature), false, answers.join('\n'));
      assert.match(answers.join('\n'), /X-Amz-Signature=\*\*\*/, "the store's 404 says where, masked");
      assert.match(answers.join('\n'), /Unknown route: GET \[a path holding a signature\]/);
    });

  it('masks the signing parameters of an address in any line, also percent-encoded', () => {
    assert.equal(
      maskUrlSignatures('see /a%3FX-Amz-Signature%3Dabc%26b%3D1 and /c%253FX-Amz-Credential%253Dk%252Fs end'),
      'see /a%3FX-Amz-Signature%3D*** and /c%253FX-Amz-Credential%253D*** end',
    );
    assert.equal(loggableUrl('/v2/storage/files/X-Amz-Signature=abc'), '[hidden]');
    assert.equal(loggableUrl('/v2/storage/files/1?%58-Amz-Signature%3Dabc=1'), '/v2/storage/files/1?[hidden]=[hidden]');
  });
});
