import assert from 'node:assert/strict';
import { createLogger } from '../../src/common/logger.js';
import { ProgressLine } from '../../src/common/progress-line.js';
import { SecretMasker } from '../../src/common/secret-masker.js';
import { fromPlain } from '../../src/json/index.js';
import { phpJsonEncode } from '../../src/php/index.js';
import { ttySink as sink } from '../support/tty-sink.js';

describe('secret masking', () => {
  it('hides # values in raw, JSON-escaped, URL-encoded and base64 forms', () => {
    const masker = new SecretMasker();
    masker.addFromConfig(
      fromPlain({ api: { '#token': 'a"b c/d' }, nested: [{ '#list': ['x1y2z3'] }], plain: 'visible' }),
    );
    const text = [
      'a"b c/d',
      JSON.stringify('a"b c/d'),
      encodeURIComponent('a"b c/d'),
      Buffer.from('a"b c/d').toString('base64'),
      'x1y2z3',
      'visible',
    ].join(' | ');
    assert.equal(masker.mask(text), '[hidden] | "[hidden]" | [hidden] | [hidden] | [hidden] | visible');
  });

  it('is applied to every log line, errors going to stderr', () => {
    const out = sink();
    const err = sink();
    const masker = new SecretMasker();
    masker.add('hunter2');
    const logger = createLogger({ masker, stdout: out.stream, stderr: err.stream });
    logger.info('password is hunter2');
    logger.error({ detail: 'hunter2' }, 'failed');
    assert.match(out.text(), /INFO {2}password is \[hidden\]\n$/);
    assert.match(err.text(), /ERROR failed detail=\[hidden\]\n$/);
  });
});

describe('secret masking of errors', () => {
  it('hides a secret in an application error logged with its stack, on stderr', () => {
    const out = sink();
    const err = sink();
    const masker = new SecretMasker();
    masker.add('s3cr3t/"é');
    const logger = createLogger({ masker, stdout: out.stream, stderr: err.stream });
    const error = new Error(
      `could not parse ${phpJsonEncode(fromPlain({ key: 's3cr3t/"é' }))} from s3cr3t%2F%22%c3%a9`,
    );
    logger.error({ err: error }, `Application error: ${error.message}`);
    assert.match(err.text(), /Application error: could not parse/);
    assert.match(err.text(), /\n {4}at /, 'the stack is there');
    assert.ok(!err.text().includes('s3cr3t'), err.text());
  });

  it('extract() hides secrets in the message and stack of the error it throws (library use, no masker)', async () => {
    const { extract } = await import('../../src/extractor/extractor.js');
    const { silentLogger } = await import('../../src/common/logger.js');
    const { startFixtureServer } = await import('../support/fixture-server/fixture-server.js');
    const server = await startFixtureServer({ handler: (r) => ({ status: 401, body: { echo: r.url } }) });
    try {
      const parameters = fromPlain({
        api: { baseUrl: `${server.url}/` },
        config: { '#key': 'k3y/é', jobs: [{ endpoint: 'x', params: { key: { attr: '#key' } } }] },
      });
      const error = await extract(
        {
          parameters: parameters as never,
          action: 'run',
          imageParameters: new Map(),
          authorization: new Map(),
          state: new Map(),
        },
        { dataDir: await (await import('node:fs/promises')).mkdtemp('/tmp/gex-extract-'), logger: silentLogger() },
      ).then(
        () => assert.fail('the API refused'),
        (e: Error) => e,
      );
      assert.match(error.message, /\[401\]/);
      assert.match(error.message, /\[hidden\]/);
      assert.ok(!error.message.includes('k3y') && !error.stack!.includes('k3y'), error.stack);
    } finally {
      await server.close();
    }
  });
});

describe('progress line', () => {
  it('draws on a TTY and is cleared before a log line', () => {
    const out = sink();
    const progress = new ProgressLine(out.stream, { enabled: true, minIntervalMs: 0 });
    const logger = createLogger({ stdout: out.stream, stderr: out.stream, progress });
    progress.update('users: 3 pages');
    logger.info('hello');
    assert.match(out.text(), /^\r\x1b\[Kusers: 3 pages\r\x1b\[K\d\d:\d\d:\d\d\.\d{3} INFO {2}hello\n$/);
  });

  it('stays silent when the stream is not a terminal', () => {
    const out = sink();
    const progress = new ProgressLine(Object.assign(out.stream, { isTTY: false }));
    progress.update('x');
    progress.clear();
    assert.equal(out.text(), '');
  });
});

describe('log formats and structured fields', () => {
  it('writes JSON lines with the fields of child loggers and calls; the text format leaves gex fields out', () => {
    const json = sink();
    const text = sink();
    for (const [format, out] of [
      ['json', json],
      ['text', text],
    ] as const) {
      const logger = createLogger({ format, stdout: out.stream, stderr: out.stream });
      const row = logger.child({ configId: '12', rowId: 'a\nb' });
      row.info({ table: 'b.users', rows: 12345 }, 'Wrote table b.users: 12,345 rows');
      logger.info({ other: 'x' }, 'kept');
    }
    const lines = json
      .text()
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      { ...lines[0], time: undefined },
      {
        level: 'info',
        time: undefined,
        configId: '12',
        rowId: 'a\nb',
        table: 'b.users',
        rows: 12345,
        msg: 'Wrote table b.users: 12,345 rows',
      },
    );
    assert.match(text.text(), /INFO {2}Wrote table b\.users: 12,345 rows\n.*INFO {2}kept other=x\n$/);
  });

  it('hides a secret in every field and key of a JSON line, keeping the line valid JSON', () => {
    const out = sink();
    const masker = new SecretMasker();
    masker.add('tok"en\\1');
    const logger = createLogger({ format: 'json', masker, stdout: out.stream, stderr: out.stream });
    logger
      .child({ url: 'https://api/x?key=tok%22en%5C1' })
      .error({ 'tok"en\\1': 'key', nested: { list: ['tok"en\\1'] }, errorKind: 'user' }, 'API said: bad key tok"en\\1');
    const line = out.text();
    assert.ok(!line.includes('tok'), line);
    const record = JSON.parse(line);
    assert.equal(record.url, 'https://api/x?key=[hidden]');
    assert.equal(record['[hidden]'], 'key');
    assert.deepEqual(record.nested, { list: ['[hidden]'] });
    assert.equal(record.msg, 'API said: bad key [hidden]');
    assert.equal(record.errorKind, 'user');
  });

  it('hides a whole JSON line whose secret is not inside a text (a number), still as valid JSON', () => {
    const out = sink();
    const masker = new SecretMasker();
    masker.add('987654');
    const logger = createLogger({ format: 'json', masker, stdout: out.stream, stderr: out.stream });
    logger.info({ records: 987654 }, 'finished');
    const record = JSON.parse(out.text());
    assert.ok(!out.text().includes('987654'), out.text());
    assert.equal(record.level, 'info');
    assert.match(record.msg, /hidden/);
  });

  it('library use (extract() without a masker): the masking logger hides secrets in fields and bindings too', async () => {
    const { maskingLogger } = await import('../../src/extractor/auth/index.js');
    const out = sink();
    const masker = new SecretMasker();
    masker.add('p4ss');
    const logger = maskingLogger(createLogger({ format: 'json', stdout: out.stream, stderr: out.stream }), masker);
    logger.child({ url: 'http://x/?k=p4ss' }).warn({ detail: 'p4ss' }, 'p4ss');
    assert.ok(!out.text().includes('p4ss'), out.text());
    assert.equal(JSON.parse(out.text()).url, 'http://x/?k=[hidden]');
  });
});

describe('one log writer: masking without a round trip', () => {
  const SECRET = 'p@ss"w\\rd-42';

  type Log = (logger: ReturnType<typeof createLogger>) => void;

  function logged(format: 'text' | 'json', log: Log): { out: string; err: string } {
    const out = sink();
    const err = sink();
    const masker = new SecretMasker();
    masker.add(SECRET);
    log(createLogger({ format, masker, stdout: out.stream, stderr: err.stream, level: 'debug' }));
    return { out: out.text(), err: err.text() };
  }

  for (const format of ['text', 'json'] as const) {
    it(`${format}: hides a secret in nested fields, bindings, keys, an error's message, stack and own fields`, () => {
      const fields = { code: 'E_BAD', detail: { echoed: SECRET } };
      const error = Object.assign(new Error(`refused ${encodeURIComponent(SECRET)}`), fields);
      const { out, err } = logged(format, (logger) => {
        const child = logger.child({ endpoint: `users?key=${SECRET}` });
        child.info({ deep: { list: [{ value: SECRET }] }, [SECRET]: 1 }, 'nested');
        child.error({ err: error }, `failed: ${error.message}`);
        child.warn(error);
      });
      const all = out + err;
      for (const form of [SECRET, encodeURIComponent(SECRET), JSON.stringify(SECRET).slice(1, -1)]) {
        assert.ok(!all.includes(form), all);
      }
      assert.match(err, /failed: refused \[hidden\]/);
      assert.match(out, /WARN|"warn"/, 'an error given alone is a warning line on stdout');
      if (format === 'json') {
        const [info, warning] = out
          .trimEnd()
          .split('\n')
          .map((line) => JSON.parse(line));
        assert.deepEqual(info.deep, { list: [{ value: '[hidden]' }] });
        assert.equal(info.endpoint, 'users?key=[hidden]');
        assert.equal(warning.err.code, 'E_BAD');
        assert.equal(warning.err.type, 'Error');
        assert.deepEqual(warning.err.detail, { echoed: '[hidden]' });
        const failed = JSON.parse(err);
        assert.match(failed.err.stack, /^Error: refused \[hidden\]\n {4}at /);
      } else {
        assert.match(err, /\nError: refused \[hidden\]\n {4}at /, 'the stack follows the line');
      }
    });
  }

  it('json: a cycle, a bigint, a Map and a throwing getter in a field still give one valid line', () => {
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const hostile = Object.defineProperty({}, 'boom', {
      enumerable: true,
      get() {
        throw new Error('no');
      },
    });
    const fields = { cyclic, big: 12n, map: new Map([['a', 1]]), hostile };
    const { out } = logged('json', (logger) => logger.info(fields, 'odd values'));
    const record = JSON.parse(out);
    assert.deepEqual(record.cyclic, { name: 'loop', self: '[circular]' });
    assert.equal(record.big, '12');
    assert.deepEqual(record.map, { a: 1 });
    assert.equal(record.hostile, '[unserializable]');
  });

  it('json: a field named __proto__ stays a field, not the prototype', () => {
    const fields = JSON.parse('{"__proto__": {"polluted": true}}') as object;
    const { out } = logged('json', (logger) => logger.info(fields, 'proto'));
    assert.equal(out.includes('"__proto__":{"polluted":true}'), true, out);
    assert.equal(({} as { polluted?: boolean }).polluted, undefined);
  });

  it('text: a field value with a line break cannot print a line of its own', () => {
    const { out } = logged('text', (logger) => logger.info({ note: 'a\n00:00:00.000 ERROR forged' }, 'kept'));
    assert.equal(out.split('\n').length, 2, out);
    assert.match(out, /kept note="a\\n00:00:00\.000 ERROR forged"\n$/);
  });

  it('levels: below the logger level nothing is built or written; a child may have its own level (fastify)', () => {
    const out = sink();
    const logger = createLogger({ level: 'warn', stdout: out.stream, stderr: out.stream });
    let built = 0;
    const fields = {
      get records() {
        built++;
        return 1;
      },
    };
    logger.info(fields, 'not written');
    assert.equal(logger.isLevelEnabled('info'), false);
    assert.equal(logger.isLevelEnabled('warn'), true);
    logger.child({}, { level: 'debug' }).debug('route debug');
    assert.equal(built, 0);
    assert.match(out.text(), /DEBUG route debug\n$/);
    assert.equal(logger.level, 'warn');
  });

  it('a child with a masker of its own (extract() as a library) hides its secrets in messages and stacks', () => {
    const out = sink();
    const logger = createLogger({ format: 'text', stdout: out.stream, stderr: out.stream });
    const runSecrets = new SecretMasker();
    const child = logger.child({}, { masker: runSecrets });
    runSecrets.add('late-token');
    child.error({ err: new Error('bad late-token') }, 'late-token refused');
    logger.info('late-token outside the run is not known to this logger');
    assert.match(out.text(), /ERROR \[hidden\] refused\nError: bad \[hidden\]\n/);
    assert.match(out.text(), /INFO {2}late-token outside/);
  });
});

describe('log file (--log-file)', () => {
  it('gets the same masked lines as stdout and stderr, appended to what is there', async () => {
    const { mkdtemp, readFile, writeFile } = await import('node:fs/promises');
    const { LogFile } = await import('../../src/common/log-file.js');
    const file = `${await mkdtemp('/tmp/gex-log-')}/run.log`;
    await writeFile(file, 'earlier\n');
    const out = sink();
    const err = sink();
    const masker = new SecretMasker();
    masker.add('hunter2');
    const logFile = LogFile.open(file, []);
    const logger = createLogger({ format: 'json', masker, stdout: out.stream, stderr: err.stream, file: logFile });
    logger.info({ url: 'x?k=hunter2' }, 'one');
    logger.error('two hunter2');
    logFile.close();
    logger.info('after close: not in the file');
    const text = await readFile(file, 'utf8');
    assert.equal(text, `earlier\n${out.chunks[0]}${err.text()}`);
    assert.ok(!text.includes('hunter2'), text);
  });

  it('refuses a path in a guarded folder (also through a linked folder), a symbolic link, a FIFO', async () => {
    const { mkdtemp, mkdir, symlink } = await import('node:fs/promises');
    const { execFileSync } = await import('node:child_process');
    const { LogFile } = await import('../../src/common/log-file.js');
    const { UserError } = await import('../../src/common/errors.js');
    const dir = await mkdtemp('/tmp/gex-log-');
    await mkdir(`${dir}/data/out/tables`, { recursive: true });
    await symlink(`${dir}/data/out`, `${dir}/linked-out`);
    await symlink(`${dir}/elsewhere.log`, `${dir}/link.log`);
    execFileSync('mkfifo', [`${dir}/fifo`]);
    const guarded = [`${dir}/data/in`, `${dir}/data/out`];
    for (const [file, why] of [
      [`${dir}/data/out/tables/x.csv`, /inside .*data\/out, which gex writes and clears/],
      [`${dir}/linked-out/tables/x.csv`, /inside .*data\/out/],
      [`${dir}/link.log`, /symbolic link/],
      [`${dir}/fifo`, /not a regular file/],
      [`${dir}/missing/x.log`, /its folder cannot be reached/],
    ] as const) {
      const refused = (e: Error) => e instanceof UserError && why.test(e.message);
      assert.throws(() => LogFile.open(file, guarded), refused, file);
    }
    LogFile.open(`${dir}/data/run.log`, guarded).close();
  });
});
