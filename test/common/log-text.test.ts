import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/common/logger.js';
import {
  displayId,
  displayText,
  excerpt,
  EXCERPT_CHARACTERS,
  excerptId,
  excerptList,
  excerptQuoted,
  excerptText,
  quoteForLog,
} from '../../src/common/log-text.js';

describe('ids and names in log lines', () => {
  it('shows plain ids as they are and quotes every other id', () => {
    assert.equal(displayId('a-users'), 'a-users');
    assert.equal(displayId('123'), '123');
    assert.equal(displayId('../../victim'), '../../victim');
    assert.equal(displayId('two words'), '"two words"');
    assert.equal(displayId(''), '""');
    assert.equal(displayId('say "hi"'), '"say \\"hi\\""');
    assert.equal(displayId('a\nb'), '"a\\nb"');
  });

  it('escapes every character that breaks, rewrites or hides a line', () => {
    for (const c of ['\n', '\r', '\u0000', '\u001b', '\u0085', '\u2028', '\u2029', '\u202e', '\u200b', '\u{E0041}']) {
      const shown = displayText(`x${c}y`);
      assert.ok(!shown.includes(c), `U+${c.codePointAt(0)!.toString(16)} is escaped: ${shown}`);
      assert.match(shown, /^"x(\\u[0-9a-f]{4}|\\[nr])+y"$/);
      assert.equal(JSON.parse(shown), `x${c}y`, 'the quoted form reads back as the original');
    }
    assert.equal(displayText('Users and orders'), 'Users and orders');
    assert.equal(quoteForLog('Off'), '"Off"');
  });

  it('an id with a line break cannot forge a log line', () => {
    let out = '';
    const sink = new Writable({ write: (chunk, _e, done) => ((out += String(chunk)), done()) });
    const logger = createLogger({ stdout: sink, stderr: sink });
    logger.info(`Saved the state of row ${displayId('r1\n12:00:00.000 ERROR forged')}`);
    const lines = out.split('\n').filter(Boolean);
    assert.equal(lines.length, 1);
    assert.match(lines[0], /INFO {2}Saved the state of row "r1\\n12:00:00\.000 ERROR forged"$/);
  });

  it('quotes at most an excerpt of a value someone sent, marked when cut', () => {
    const huge = 'x'.repeat(500_000);
    assert.equal(excerptId(huge), `${'x'.repeat(EXCERPT_CHARACTERS)}…`);
    assert.equal(excerptId('a-users'), 'a-users');
    assert.equal(excerptQuoted('a-users'), '"a-users"');
    assert.equal(excerptQuoted(`${'y'.repeat(200)}\n`), `"${'y'.repeat(100)}"…`);
    // escaped as a whole value would be: the cut never leaves a raw line break or half an escape
    assert.equal(excerptId(`a\n${'b'.repeat(300)}`, 5), '"a\\nbbb"…');
    assert.equal(excerptText(`name ${'z'.repeat(300)}`, 7), 'name zz…');
    // an astral character is never split into half a surrogate pair
    assert.equal(excerptId(`${'a'.repeat(99)}😀tail`), `${'a'.repeat(99)}…`);
    assert.equal(excerpt('short', 10), 'short');
    assert.equal(excerpt('0123456789abc', 10), '0123456789…');
    assert.equal(excerptList(['a', 'b c', 'd'], excerptId, 2), 'a, "b c" and 1 more');
    assert.equal(excerptList(Array.from({ length: 1000 }, () => huge)).length < 1200, true);
  });
});
