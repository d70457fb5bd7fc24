import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/common/logger.js';
import { displayId, displayText, quoteForLog } from '../../src/common/log-text.js';

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
});
