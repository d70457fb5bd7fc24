import assert from 'node:assert/strict';
import { decodeJson, type JsonObject } from '../../src/json/index.js';
import { buildUrl, guzzleQueryEncode, resolveGuzzleUrl } from '../../src/php/index.js';

const params = (json: string) => decodeJson(json) as JsonObject;

describe('php: buildUrl', () => {
  it('returns the endpoint untouched without params', () => {
    assert.equal(buildUrl('users?a=b c', new Map()), 'users?a=b c');
  });

  it('overlays params on the endpoint query, keeping existing keys in place', () => {
    assert.equal(buildUrl('users?x=1&y=a+b%20c', params('{"z":2}')), 'users?x=1&y=a+b+c&z=2');
    assert.equal(buildUrl('users?x=1&y=2', params('{"x":3,"z":4}')), 'users?x=3&y=2&z=4');
  });

  it('re-encodes raw keys of the endpoint query (double encoding, as GE does)', () => {
    assert.equal(buildUrl('users?a%5Bb%5D=1', params('{"z":2}')), 'users?a%255Bb%255D=1&z=2');
  });

  it('drops top-level params with PHP-empty keys', () => {
    assert.equal(buildUrl('users', decodeJson('{"0":"a","1":"b","":"c","k":"v"}') as JsonObject), 'users?1=b&k=v');
  });

  it('encodes nested params with brackets (EX036)', () => {
    assert.equal(
      buildUrl(
        'users',
        params('{"filter":{"field":"type","operator":"equal","value":"active"},"return":{"fields":["id","name"]}}'),
      ),
      'users?filter%5Bfield%5D=type&filter%5Boperator%5D=equal&filter%5Bvalue%5D=active&return%5Bfields%5D%5B0%5D=id&return%5Bfields%5D%5B1%5D=name',
    );
  });
});

describe('php: Guzzle base_uri resolution', () => {
  const cases: Array<[string, string, string]> = [
    ['https://example.com/3.0/', 'campaign', 'https://example.com/3.0/campaign'],
    ['https://example.com/3.0/', 'campaign/', 'https://example.com/3.0/campaign/'],
    ['https://example.com/3.0/', '/1.0/campaign', 'https://example.com/1.0/campaign'],
    ['https://example.com/3.0/', '../v2/users', 'https://example.com/v2/users'],
    ['https://example.com/3.0/', 'https://eu.example.com/x', 'https://eu.example.com/x'],
    ['https://example.com/3.0/', '//other.com/p', 'https://other.com/p'],
    ['https://example.com/3.0/', '?page=2', 'https://example.com/3.0/?page=2'],
    ['https://example.com/api', 'users', 'https://example.com/users'],
    ['https://example.com', 'campaign', 'https://example.com/campaign'],
    ['https://example.com/api/?key=1', 'users', 'https://example.com/api/users'],
    ['http://mock-server:80/x/', 'users', 'http://mock-server/x/users'],
    ['HTTP://Example.COM:8080/a/', 'b', 'http://example.com:8080/a/b'],
  ];
  for (const [base, ref, expected] of cases) {
    it(`${base} + ${ref}`, () => assert.equal(resolveGuzzleUrl(base, ref), expected));
  }

  it('percent-encodes what psr7 encodes and keeps valid escapes', () => {
    assert.equal(resolveGuzzleUrl('http://h/', 'user/{user-id}'), 'http://h/user/%7Buser-id%7D');
    assert.equal(resolveGuzzleUrl('http://h/', 'user/a b|c'), 'http://h/user/a%20b%7Cc');
    assert.equal(resolveGuzzleUrl('http://h/', 'users?q=a b&x=[1]&t=~*'), 'http://h/users?q=a%20b&x=%5B1%5D&t=~*');
    assert.equal(resolveGuzzleUrl('http://h/', 'a%2Fb%zz?x=%41'), 'http://h/a%2Fb%25zz?x=%41');
  });

  it('percent-encodes a character outside the BMP as its UTF-8 bytes (no malformed-URI crash)', () => {
    assert.equal(resolveGuzzleUrl('http://h/', 'a😀?q=é😀'), 'http://h/a%F0%9F%98%80?q=%C3%A9%F0%9F%98%80');
  });

  it("reads the target with PHP's parse_url as psr7 does: `x/1:80` is host x, port 80 (PHP 7.4 + Guzzle)", () => {
    const base = 'http://127.0.0.1:1234/';
    assert.equal(resolveGuzzleUrl(base, 'c1/1:80'), 'http://c1/1:80');
    assert.equal(resolveGuzzleUrl(base, 'c1/h:0'), 'http://c1:0/h:0');
    assert.equal(resolveGuzzleUrl(base, 'c1/0:1'), 'http://c1:1/0:1');
    assert.equal(resolveGuzzleUrl(base, 'c1/a:b'), 'http://127.0.0.1:1234/c1/a:b');
    assert.equal(resolveGuzzleUrl(base, 'c1/a b:80/x'), 'http://c1/a%20b:80/x');
    assert.throws(() => resolveGuzzleUrl(base, 'c1/x:99999'), /Unable to parse URI: c1\/x:99999/);
  });
});

describe('php: Guzzle query normalisation', () => {
  it('percent-encodes what psr7 Uri does not allow in a query, byte by byte', () => {
    assert.equal(guzzleQueryEncode("a b?c=d&e/f'~%zz%20é😀"), "a%20b?c=d&e/f'~%25zz%20%C3%A9%F0%9F%98%80");
  });
});
