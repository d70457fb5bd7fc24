import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { UserError } from '../../../src/common/errors.js';
import { maskedSmtpUrl, parseSmtpSettings } from '../../../src/jobs/notifications/smtp-settings.js';

const FROM = 'gex@example.com';
const PASSWORD = 's3cr3t-Pa55';

/** the UserError parseSmtpSettings throws for `url` (and `from`) */
function refusal(url: string, from = FROM): UserError {
  try {
    parseSmtpSettings({ url, from });
  } catch (err) {
    assert.ok(err instanceof UserError, `expected a UserError, got ${String(err)}`);
    assert.equal(err.gexCode, 'GEX_SETTING_INVALID');
    return err;
  }
  assert.fail(`expected ${JSON.stringify(url)} to be refused`);
}

describe('SMTP relay settings (GEX_SMTP_URL, GEX_SMTP_FROM)', () => {
  it('reads smtp:// with STARTTLS when offered and port 587 by default', () => {
    const settings = parseSmtpSettings({ url: 'smtp://smtp.example.com', from: FROM });
    assert.deepEqual(
      { host: settings.host, port: settings.port, security: settings.security, from: settings.from },
      { host: 'smtp.example.com', port: 587, security: 'starttls', from: FROM },
    );
    assert.equal(settings.credentials(), undefined);
  });

  it('reads smtps:// as TLS from the start on port 465, a port, IPv6 and ?starttls=required', () => {
    assert.deepEqual(
      [parseSmtpSettings({ url: 'smtps://mail.example.com', from: FROM })].map((s) => [s.security, s.port]),
      [['tls', 465]],
    );
    const required = parseSmtpSettings({ url: 'smtp://relay.internal:2525?starttls=required', from: FROM });
    assert.deepEqual([required.host, required.port, required.security], ['relay.internal', 2525, 'starttls-required']);
    const v6 = parseSmtpSettings({ url: 'smtp://[::1]:25', from: FROM });
    assert.deepEqual([v6.host, v6.port], ['::1', 25]);
  });

  it('decodes the user and password, and requires STARTTLS for them unless the relay is this machine', () => {
    const remote = parseSmtpSettings({
      url: `smtp://ops%40example.com:${encodeURIComponent('p@ss/w:rd')}@smtp.example.com`,
      from: FROM,
    });
    assert.deepEqual(remote.credentials(), { user: 'ops@example.com', pass: 'p@ss/w:rd' });
    assert.equal(remote.security, 'starttls-required');
    const local = parseSmtpSettings({ url: `smtp://gex:${PASSWORD}@127.0.0.1:2525`, from: FROM });
    assert.equal(local.security, 'starttls');
    assert.deepEqual(local.credentials(), { user: 'gex', pass: PASSWORD });
  });

  it('never shows the password: toString, JSON, util.inspect, template strings', () => {
    const settings = parseSmtpSettings({ url: `smtps://gex:${PASSWORD}@smtp.example.com`, from: FROM });
    const shown = [
      String(settings),
      `${settings}`,
      JSON.stringify(settings),
      JSON.stringify({ settings }),
      inspect(settings),
    ];
    for (const text of shown) {
      assert.ok(!text.includes(PASSWORD), text);
      assert.ok(!text.includes(Buffer.from(PASSWORD).toString('base64')), text);
    }
    assert.equal(String(settings), 'smtps://gex:***@smtp.example.com:465 (TLS), from gex@example.com');
    assert.deepEqual(Object.keys(settings).sort(), ['from', 'host', 'port', 'security', 'user']);
  });

  it('refuses a missing or empty host, naming the setting and the shape', () => {
    for (const url of [
      '',
      'smtp://',
      'smtp:///',
      'smtp://:25',
      `smtp://gex:${PASSWORD}@:25`,
      'smtp:relay.example.com',
    ]) {
      const err = refusal(url);
      assert.match(err.message, /^GEX_SMTP_URL must be /);
      assert.match(err.message, /smtp:\/\/(\[user:password@\])?/);
      assert.ok(!err.message.includes(PASSWORD), err.message);
    }
  });

  it('refuses hostile URLs without echoing a password or a control character', () => {
    const hostile = [
      `smtp://gex:${PASSWORD}@smtp.exa\r\nmple.com`,
      `smtp://gex:${PASSWORD}@smtp.example.com\n:25`,
      `smtp://gex:${PASSWORD}\u0000@smtp.example.com`,
      `smtp://gex:${PASSWORD} @smtp.example.com`,
      `http://gex:${PASSWORD}@smtp.example.com`,
      `smtp://gex:${PASSWORD}@smtp.example.com/path`,
      `smtp://gex:${PASSWORD}@smtp.example.com#frag`,
      `smtp://gex:${PASSWORD}@smtp.example.com:0`,
      `smtp://gex:${PASSWORD}@smtp.example.com:99999`,
      `smtp://gex:${PASSWORD}@exa%20mple.com`,
      `smtp://gex:${PASSWORD}@smtp.example.com?starttls=yes`,
      `smtp://gex:${PASSWORD}@smtp.example.com?password=${PASSWORD}`,
      `smtps://gex:${PASSWORD}@smtp.example.com?starttls=required`,
      `smtp://gex:%zz${PASSWORD}@smtp.example.com`,
      `smtp://gex:@smtp.example.com`,
      `smtp://:${PASSWORD}@smtp.example.com`,
      `smtp://gex:${PASSWORD}%0A@smtp.example.com`,
      `smtp://gex:${PASSWORD}@999.1.1.1`,
      `smtp://gex:${PASSWORD}@1.2.3.4.5`,
      `smtp://gex:${PASSWORD}@-relay.example.com`,
      `smtp://${'a'.repeat(3000)}`,
    ];
    for (const url of hostile) {
      const err = refusal(url);
      assert.ok(!err.message.includes(PASSWORD), err.message);
      assert.ok(!/[\r\n\u0000]/.test(err.message), JSON.stringify(err.message));
      assert.ok(err.message.length < 700, err.message);
    }
    assert.match(refusal('http://smtp.example.com').message, /another scheme is not an SMTP relay/);
    assert.match(refusal('smtp://smtp.example.com?starttls=yes').message, /\?starttls=required, or no \?starttls/);
    assert.match(
      refusal('smtp://smtp.example.com?starttls=yes').message,
      /got "smtp:\/\/smtp\.example\.com\?starttls=yes"/,
    );
    assert.match(refusal('smtp://gex:@smtp.example.com').message, /both a user and a password/);
    assert.match(refusal('smtp://smtp.example.com:99999').message, /port|smtp:\/\//);
  });

  it('masks the password of a URL it cannot even parse', () => {
    assert.equal(maskedSmtpUrl(`smtp://gex:${PASSWORD}@@bad host`), 'smtp://gex:***@bad host');
    assert.equal(maskedSmtpUrl(`smtp://host?pass=${PASSWORD}&starttls=x`), 'smtp://host?pass=***&starttls=x');
    assert.equal(maskedSmtpUrl('smtp://gex@host:25'), 'smtp://gex@host:25');
  });

  it('refuses a From that is not a plain address, naming GEX_SMTP_FROM', () => {
    for (const from of [
      '',
      'gex',
      'gex@',
      '@example.com',
      'gex <gex@example.com>',
      'gex@example.com\r\nBcc: x@evil.com',
      'a b@example.com',
      'gex@[127.0.0.1]',
      `${'a'.repeat(250)}@example.com`,
    ]) {
      const err = refusal('smtp://smtp.example.com', from);
      assert.match(err.message, /^GEX_SMTP_FROM must be an e-mail address to send from, such as gex@example\.com/);
      assert.ok(!/[\r\n]/.test(err.message), JSON.stringify(err.message));
    }
  });

  it('names the settings as the caller calls them', () => {
    assert.throws(
      () => parseSmtpSettings({ url: 'smtp://', from: FROM }, { url: '--smtp-url', from: '--smtp-from' }),
      /^UserError: --smtp-url must be /,
    );
    assert.throws(
      () => parseSmtpSettings({ url: 'smtp://h.example.com', from: 'x' }, { url: '--smtp-url', from: '--smtp-from' }),
      /^UserError: --smtp-from must be /,
    );
  });
});
