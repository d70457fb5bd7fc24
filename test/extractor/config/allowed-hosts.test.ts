import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { silentLogger } from '../../../src/common/logger.js';
import { allowedHostsRule, dotSegmentOf } from '../../../src/extractor/config/allowed-hosts.js';
import { DataFolder } from '../../../src/extractor/data-folder.js';
import { extract } from '../../../src/extractor/extractor.js';
import { startFixtureServer } from '../../support/fixture-server/fixture-server.js';
import { fromPlain, type JsonObject } from '../../../src/json/index.js';
import { makeDataDir } from '../../support/extraction.js';

const rule = (entries: unknown[]) => allowedHostsRule(fromPlain({ allowed_hosts: entries }) as JsonObject)!;
const allows = (entries: unknown[], url: string) => rule(entries)(url).allowed;

/**
 * Issue 23 item 11: what the whitelist checks is what gex sends. gex sends a URL's path as written
 * (Guzzle's bytes), so the check reads that path, not the one a URL parser normalises it to; a
 * path with a dot segment in any spelling is refused under an `endpoint` entry (a server may resolve
 * it elsewhere); the host, port and scheme are the ones the client connects to.
 */
describe('allowed_hosts: the URL checked is the URL sent', () => {
  const api = [{ host: 'api.example.com', endpoint: 'api' }];

  it('refuses a dot segment in every spelling under an endpoint entry', () => {
    const sneaky = [
      'admin/%2e%2e/api/x',
      'admin/%2E%2E/api/x',
      'admin/.%2e/api/x',
      'admin/%2e./api/x',
      'admin/../api/x',
      'api/x/../../admin',
      'api/%2e%2e/admin',
      'api/x%2f..%2f..%2fadmin',
      'api/x%2F%2E%2E%2Fadmin',
      'api\\..\\admin',
      'api/..;/admin',
      'api/%2e%2e;x=1/admin',
      'api/%252e%252e/admin',
      'api/\uff0e\uff0e/admin',
      'api/%EF%BC%8E%EF%BC%8E/admin',
      'api/./x',
      'api/%2e/x',
    ];
    for (const path of sneaky) {
      const verdict = rule(api)(`https://api.example.com/${path}`);
      assert.equal(verdict.allowed, false, path);
    }
    const verdict = rule(api)('https://api.example.com/admin/%2e%2e/api/x');
    assert.ok(!verdict.allowed && /has the dot segment "%2e%2e"/.test(verdict.reason), JSON.stringify(verdict));
  });

  it('compares the endpoint with the path as sent, segment by segment (as GE does)', () => {
    assert.equal(allows(api, 'https://api.example.com/api/x'), true);
    assert.equal(allows(api, 'https://api.example.com/api'), true);
    assert.equal(allows(api, 'https://api.example.com/api/'), true);
    assert.equal(allows(api, 'https://api.example.com/api/x?q=../../admin'), true, 'a query is no path');
    assert.equal(
      allows(api, 'https://api.example.com/api/a%2Fb'),
      true,
      'an encoded slash without dots (GitLab ids) stays allowed',
    );
    assert.equal(allows(api, 'https://api.example.com/apix'), false);
    assert.equal(
      allows(api, 'https://api.example.com/%61pi/x'),
      false,
      'an encoded letter is not the endpoint as sent',
    );
    assert.equal(allows(api, 'https://api.example.com/api;v=1/x'), false, 'a ;parameter changes the segment');
    assert.equal(allows(api, 'https://api.example.com//api/x'), false, 'an empty first segment is not the endpoint');
    assert.equal(allows(api, 'https://api.example.com/admin'), false);
    assert.equal(
      allows([{ host: 'api.example.com', endpoint: '/v1/users/' }], 'https://api.example.com/v1/users/7'),
      true,
    );
    assert.equal(
      allows([{ host: 'api.example.com', endpoint: 'v1/users' }], 'https://api.example.com/v1/usersX/7'),
      false,
    );
  });

  it('without an endpoint the path does not matter, dot segments included', () => {
    assert.equal(allows([{ host: 'api.example.com' }], 'https://api.example.com/a/%2e%2e/b'), true);
  });

  it('checks the host the client connects to: userinfo, backslashes, case, unicode, IPv6, trailing dots', () => {
    const host = [{ host: 'api.example.com' }];
    assert.equal(allows(host, 'https://api.example.com@evil.com/x'), false, 'userinfo is not the host');
    assert.equal(allows(host, 'https://evil.com\\@api.example.com/x'), false, 'a backslash ends the host');
    assert.equal(allows(host, 'https://evil.com#@api.example.com/x'), false);
    assert.equal(allows(host, 'https://API.Example.COM/x'), true, 'host names are case-insensitive');
    assert.equal(allows([{ host: 'API.example.com' }], 'https://api.example.com/x'), true);
    assert.equal(
      allows(host, 'https://api\u3002example\u3002com/x'),
      true,
      'an ideographic full stop is a dot to the client too',
    );
    assert.equal(allows(host, 'https://api.example.com./x'), false, 'a trailing dot names another host');
    assert.equal(allows(host, 'https://api.example.com.evil.com/x'), false);
    assert.equal(allows([{ host: 'bücher.example' }], 'https://xn--bcher-kva.example/x'), true);
    assert.equal(allows([{ host: '::1' }], 'http://[::1]:8080/x'), true);
    assert.equal(allows([{ host: '[::1]' }], 'http://[0:0:0:0:0:0:0:1]/x'), true);
    assert.equal(
      allows([{ host: 'api.example.com:443' }], 'https://api.example.com/x'),
      false,
      'a host with a port is no host name',
    );
  });

  it('checks the port and scheme the client uses (default ports included)', () => {
    const entry = [{ host: 'api.example.com', scheme: 'https', port: '443' }];
    assert.equal(allows(entry, 'https://api.example.com/x'), true);
    assert.equal(allows(entry, 'https://api.example.com:443/x'), true);
    assert.equal(allows(entry, 'https://api.example.com:8443/x'), false);
    assert.equal(allows(entry, 'http://api.example.com:443/x'), false);
    assert.equal(allows(entry, 'not a url'), false);
  });

  it('dotSegmentOf names the segment, or null', () => {
    assert.equal(dotSegmentOf('/a/b.c/..d/x..'), null);
    assert.equal(dotSegmentOf('/a/%2E%2e/b'), '%2E%2e');
    assert.equal(dotSegmentOf('/a/x%2f..%2fy/b'), 'x%2f..%2fy');
    assert.equal(dotSegmentOf('/a/..;x/b'), '..;x');
  });
});

describe('allowed_hosts in a run: a job URL with a dot segment is refused before anything is sent', () => {
  it('refuses admin/%2e%2e/api/x under endpoint "api", sends api/x, and refuses a next page or a redirect that climbs out', async () => {
    const server = await startFixtureServer({
      handler: (r) => {
        if (r.url === '/api/x') return { body: { items: [{ id: 1 }], next: `${server.url}/api/%2e%2e/admin/secrets` } };
        // a redirect hop is sent as the client parses it: `..;` survives parsing, and is refused
        if (r.url === '/api/moved') return { status: 302, headers: { Location: '/api/..;/admin/secrets' }, body: {} };
        return { body: { items: [{ id: 2 }] } };
      },
    });
    const allowed = [{ host: '127.0.0.1', port: String(server.port), endpoint: 'api' }];
    const run = async (endpoint: string, pagination?: unknown) => {
      const dir = await makeDataDir({
        parameters: {
          api: { baseUrl: `${server.url}/`, pagination },
          config: { jobs: [{ endpoint, dataField: 'items' }] },
        },
        image_parameters: { allowed_hosts: allowed },
      });
      try {
        return await extract(await new DataFolder(dir).read(), { dataDir: dir, logger: silentLogger() });
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    };
    try {
      await assert.rejects(
        run('admin/%2e%2e/api/x'),
        /URL "http:\/\/127\.0\.0\.1:\d+\/admin\/%2e%2e\/api\/x" is not in the allowed hosts whitelist \(image_parameters\.allowed_hosts\): its path "\/admin\/%2e%2e\/api\/x" has the dot segment "%2e%2e"/,
      );
      assert.equal(server.requests.length, 0, 'nothing was sent');
      await assert.rejects(
        run('api/x', { method: 'response.url', urlKey: 'next' }),
        /Refusing GET http:\/\/127\.0\.0\.1:\d+\/api\/%2e%2e\/admin\/secrets: its path .* has the dot segment/,
      );
      assert.deepEqual(
        server.requests.map((r) => r.url),
        ['/api/x'],
        'the first page was sent as checked; the next page was not sent',
      );
      server.requests.length = 0;
      await assert.rejects(
        run('api/moved'),
        /redirected to http:\/\/127\.0\.0\.1:\d+\/api\/\.\.;\/admin\/secrets: its path "\/api\/\.\.;\/admin\/secrets" has the dot segment "\.\.;"/,
      );
      assert.deepEqual(
        server.requests.map((r) => r.url),
        ['/api/moved'],
        'the redirect target was not requested',
      );
    } finally {
      await server.close();
    }
  });
});
