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
    const logger = createLogger({
      stdout: recorder('out', writes),
      stderr: recorder('err', writes),
      batchStdout: true,
      format: 'json',
    });
    logger.info('one');
    logger.info('two');
    logger.info('three');
    assert.equal(writes.length, 0, 'nothing written yet');
    logger.error('boom');
    assert.equal(writes.length, 2);
    assert.deepEqual(
      writes[0]
        .slice(4)
        .trimEnd()
        .split('\n')
        .map((l) => (JSON.parse(l) as { msg: string }).msg),
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

  it('batches the log file too, and flushes both before an error line', async () => {
    const { mkdtemp, readFile } = await import('node:fs/promises');
    const { LogFile } = await import('../../src/common/log-file.js');
    const file = `${await mkdtemp('/tmp/gex-log-')}/server.log`;
    const writes: string[] = [];
    const logFile = LogFile.open(file, []);
    const streams = { stdout: recorder('out', writes), stderr: recorder('err', writes) };
    const logger = createLogger({ ...streams, batchStdout: true, file: logFile });
    logger.info('one');
    logger.info('two');
    assert.equal(await readFile(file, 'utf8'), '', 'batched: nothing in the file yet');
    logger.error('boom');
    logFile.close();
    assert.deepEqual(
      (await readFile(file, 'utf8')).split('\n').map((l) => l.slice(13)),
      ['INFO  one', 'INFO  two', 'ERROR boom', ''],
    );
  });
});
