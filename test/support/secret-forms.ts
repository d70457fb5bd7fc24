import assert from 'node:assert/strict';
import {
  guzzleQueryBuild,
  phpHttpBuildQuery,
  phpJsonEncode,
  phpRawUrlencode,
  phpUrlencode,
  resolveGuzzleUrl,
} from '../../src/php/index.js';

/**
 * Every encoding of a secret that gex's output could contain, computed with the encoders gex
 * uses for requests (PHP urlencode / rawurlencode / http_build_query / json_encode, Guzzle query
 * and URI building) and those of JavaScript, with lower-case hex variants, each also inside one
 * and two more levels of JSON string escaping (a JSON log line, a summary, an API echoing JSON).
 */
export function secretForms(secret: string): Map<string, string> {
  const forms = new Map<string, string>();
  const add = (name: string, form: string) => {
    if (form !== '' && ![...forms.values()].includes(form)) forms.set(name, form);
  };
  const value = new Map([['k', secret]]);
  const base = new Map<string, string>([
    ['raw', secret],
    ['PHP urlencode', phpUrlencode(secret)],
    ['PHP rawurlencode', phpRawUrlencode(secret)],
    ['http_build_query (GET params, form body)', phpHttpBuildQuery(value).slice(2)],
    ['Guzzle Query::build RFC 3986 (auth query)', guzzleQueryBuild(value).slice(2)],
    ['Guzzle Query::build RFC 1738', guzzleQueryBuild(value, 'RFC1738').slice(2)],
    ['Guzzle URI normalisation', resolveGuzzleUrl('http://h/', `x?k=${secret}`).slice('http://h/x?k='.length)],
    ['WHATWG URL query', new URL(resolveGuzzleUrl('http://h/', `x?k=${secret}`)).search.slice(3)],
    ['encodeURIComponent', encodeURIComponent(secret)],
    ['URLSearchParams', new URLSearchParams([['k', secret]]).toString().slice(2)],
    ['base64', Buffer.from(secret).toString('base64')],
    ['UTF-8 bytes read as Latin-1 (a header echoed by the API)', Buffer.from(secret, 'utf8').toString('latin1')],
    ['PHP json_encode', phpJsonEncode(secret).slice(1, -1)],
    ['JSON.stringify', JSON.stringify(secret).slice(1, -1)],
  ]);
  for (const [name, form] of base) {
    add(name, form);
    add(
      `${name}, lower-case hex`,
      form.replace(/%[0-9A-F]{2}|\\u[0-9a-fA-F]{4}/g, (m) => m.toLowerCase()),
    );
    const once = JSON.stringify(form).slice(1, -1);
    add(`${name} in JSON`, once);
    add(`${name} in PHP JSON`, phpJsonEncode(form).slice(1, -1));
    add(`${name} in JSON in JSON`, JSON.stringify(once).slice(1, -1));
    add(`${name} in PHP JSON in JSON`, JSON.stringify(phpJsonEncode(form).slice(1, -1)).slice(1, -1));
  }
  return forms;
}

/**
 * Asserts that `text` holds the secret in none of its forms, that none of the secret's `markers`
 * (distinctive plain parts: they survive encodings this list does not know, and truncation) is
 * there, and that no base64 run of the text decodes to something holding a marker (a secret inside
 * a base64-encoded composite, e.g. Basic auth).
 */
export function assertNoSecret(text: string, secret: string, markers: string[], where: string): void {
  for (const [name, form] of secretForms(secret)) {
    assert.ok(!text.includes(form), `${where} holds the secret as ${name}: ${excerpt(text, form)}`);
  }
  for (const marker of markers)
    assert.ok(!text.includes(marker), `${where} holds the marker ${marker}: ${excerpt(text, marker)}`);
  for (const run of text.match(/[A-Za-z0-9+/]{12,}={0,2}/g) ?? []) {
    for (let skip = 0; skip < 4; skip++) {
      const decoded = Buffer.from(run.slice(skip), 'base64').toString('latin1');
      for (const marker of markers)
        assert.ok(!decoded.includes(marker), `${where} holds the secret inside base64: ${run}`);
    }
  }
}

function excerpt(text: string, part: string): string {
  const at = text.indexOf(part);
  return JSON.stringify(text.slice(Math.max(0, at - 80), at + part.length + 80));
}
