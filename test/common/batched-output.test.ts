import assert from 'node:assert/strict';
import { BatchedOutput } from '../../src/common/batched-output.js';
import { createLogger } from '../../src/common/logger.js';

/** A stream that records each write call, tagged with its name. */
function recorder(name: string, writes: string[]): NodeJS.WritableStream {
  return { write: (text: string) => writes.push(`${name}:${text}`) } as unknown as NodeJS.WritableStream;
}

describe('common: batched log output', () => {
  it('writes the lines of a burst in one write, and pending lines before an error line on stderr', () => {
    const writes: string[] = [];
    const logger = createLogger({ stdout: recorder('out', writes), stderr: recorder('err', writes), batchStdout: true, format: 'json' });
    logger.info('one');
    logger.info('two');
    logger.info('three');
    assert.equal(writes.length, 0, 'nothing written yet');
    logger.error('boom');
    assert.equal(writes.length, 2);
    assert.deepEqual(
      writes[0].slice(4).trimEnd().split('\n').map((l) => (JSON.parse(l) as { msg: string }).msg),
      ['one', 'two', 'three'],
    );
    assert.match(writes[1], /^err:.*"boom"/);
  });

  it('writes at once past 64 KiB, so a flood cannot grow memory', () => {
    const writes: string[] = [];
    const out = new BatchedOutput(recorder('out', writes));
    const line = `${'x'.repeat(1023)}\n`;
    for (let i = 0; i < 64; i++) out.write(line);
    assert.equal(writes.length, 1);
    assert.equal(writes[0].length, 4 + 64 * 1024);
    out.write('tail\n');
    out.flush();
    assert.deepEqual(writes.slice(1), ['out:tail\n']);
  });

  it('masks secrets in the cheap request-line path as in every other line', async () => {
    const { SecretMasker } = await import('../../src/common/secret-masker.js');
    const { recordWriterOf } = await import('../../src/common/logger.js');
    const masker = new SecretMasker();
    masker.add('s3cr3t-value');
    for (const format of ['text', 'json'] as const) {
      const writes: string[] = [];
      const logger = createLogger({ stdout: recorder('out', writes), masker, format });
      recordWriterOf(logger)!('info', { url: '/x?a=s3cr3t-value', status: 200 }, 'request');
      recordWriterOf(logger)!('debug', { url: 'not written' }, 'request');
      logger.info({ url: '/x?a=s3cr3t-value', status: 200 }, 'request');
      assert.equal(writes.length, 2);
      assert.ok(!writes.join('').includes('s3cr3t'), writes.join(''));
      const [cheap, viaPino] = writes.map((w) => w.replace(/\d\d:\d\d:\d\d\.\d{3}|"time":"[^"]+"/, 'TIME'));
      if (format === 'json') assert.equal(cheap, viaPino, 'the cheap path gives the same JSON line as pino (the time aside)');
      else {
        // a request line has no sentence besides its fields, so its text shows them; gex's other
        // lines say their structured fields in words and the text format leaves the fields out
        assert.equal(cheap, 'out:TIME INFO  request url=/x?a=[hidden] status=200\n');
        assert.equal(viaPino, 'out:TIME INFO  request\n');
      }
    }
  });
});
