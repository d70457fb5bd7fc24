import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { bodyFromArgs, type BodyInput } from '../../src/cli/input/body-change.js';
import { promptHidden, type TerminalInput } from '../../src/cli/input/secret-prompt.js';
import { UserError } from '../../src/common/errors.js';
import { fromPlain, toPlain } from '../../src/json/index.js';

const SECRET = 'hunter2-typed-secret';

/** A terminal that records raw mode and what was written to it; `type` sends keys. */
class FakeTerminal extends EventEmitter implements TerminalInput {
  raw: boolean[] = [];
  written = '';
  readonly output = { write: (text: string) => (this.written += text) };
  setRawMode(raw: boolean) {
    this.raw.push(raw);
  }
  resume() {}
  pause() {}
  type(keys: string) {
    this.emit('data', Buffer.from(keys));
  }
}

describe('secrets from a terminal prompt, standard input and files (never the command line)', () => {
  describe('promptHidden', () => {
    it('reads a line without echoing it, and puts the terminal back', async () => {
      const terminal = new FakeTerminal();
      const value = promptHidden('Value of parameters.#token (not shown): ', {
        input: terminal,
        output: terminal.output,
      });
      terminal.type(`${SECRET}\r`);
      assert.equal(await value, SECRET);
      assert.deepEqual(terminal.raw, [true, false]);
      assert.equal(
        terminal.written,
        'Value of parameters.#token (not shown): \n',
        'the prompt and a line end, nothing of the value',
      );
      assert.equal(terminal.listenerCount('data'), 0);
    });

    it('edits with backspace and Ctrl-U, ignores arrow keys and other escape sequences, takes chunks as they come', async () => {
      const terminal = new FakeTerminal();
      const value = promptHidden('? ', { input: terminal, output: terminal.output });
      terminal.type('wrong\u0015ab');
      terminal.type('x\u007f\u001b[D\u001b[3~\u001bOPc\u00e9');
      terminal.type('\n');
      assert.equal(await value, 'abcé');
      assert.ok(!terminal.written.includes('ab'));
    });

    it('Ctrl-C stops the command as SIGINT would, after putting the terminal back', async () => {
      const terminal = new FakeTerminal();
      let interrupted = false;
      const value = promptHidden('? ', {
        input: terminal,
        output: terminal.output,
        interrupt: () => (interrupted = true),
      });
      terminal.type('abc\u0003');
      await assert.rejects(value, /Stopped: nothing was entered/);
      assert.equal(interrupted, true);
      assert.deepEqual(terminal.raw, [true, false]);
    });
  });

  describe('bodyFromArgs', () => {
    let dir: string;
    before(async () => (dir = await mkdtemp(path.join(os.tmpdir(), 'gex-secret-input-'))));
    after(() => rm(dir, { recursive: true, force: true }));

    const piped = (text: string | Buffer): BodyInput => ({
      stdin: Readable.from([Buffer.from(text)]),
      prompt: () => assert.fail('no prompt without a terminal'),
    });
    const atTerminal = (answers: string[]): BodyInput & { asked: string[] } => {
      const asked: string[] = [];
      const stdin = Object.assign(Readable.from([]), { isTTY: true });
      return { stdin, asked, prompt: async (text) => (asked.push(text), answers.shift() ?? '') };
    };
    const base = fromPlain({ parameters: { api: { baseUrl: 'http://x/' } } });

    it('--set-secret reads standard input when it is not a terminal: all of it as text, without the final newline', async () => {
      const body = await bodyFromArgs(base, { 'set-secret': ['parameters.#token'] }, piped(`${SECRET}\n`));
      assert.deepEqual(toPlain(body!), { parameters: { api: { baseUrl: 'http://x/' }, '#token': SECRET } });
      // a secret that looks like a number stays text
      assert.deepEqual(toPlain((await bodyFromArgs(base, { 'set-secret': ['parameters.#pin'] }, piped('0123\r\n')))!), {
        parameters: { api: { baseUrl: 'http://x/' }, '#pin': '0123' },
      });
    });

    it('--set-secret asks at a terminal, once per path, and applies after --set and --set-file', async () => {
      const input = atTerminal([SECRET, 'second']);
      const file = path.join(dir, 'ca.pem');
      await writeFile(file, '-----BEGIN CERTIFICATE-----\nMII\n-----END CERTIFICATE-----\n');
      const body = await bodyFromArgs(
        base,
        {
          set: ['parameters.#a=plain', 'parameters.n=5'],
          'set-file': [`parameters.api.caCertificate=${file}`],
          'set-secret': ['parameters.#a', 'parameters.config["#b"]'],
        },
        input,
      );
      assert.deepEqual(input.asked, [
        'Value of parameters.#a (not shown): ',
        'Value of parameters.config.#b (not shown): ',
      ]);
      assert.deepEqual(toPlain(body!), {
        parameters: {
          api: { baseUrl: 'http://x/', caCertificate: '-----BEGIN CERTIFICATE-----\nMII\n-----END CERTIFICATE-----' },
          '#a': SECRET,
          n: 5,
          config: { '#b': 'second' },
        },
      });
    });

    it('--file - reads the body from standard input; --set-file PATH=- one value', async () => {
      assert.deepEqual(toPlain((await bodyFromArgs(base, { file: '-', set: ['x=1'] }, piped('{"parameters": {}}')))!), {
        parameters: {},
        x: 1,
      });
      assert.deepEqual(
        toPlain((await bodyFromArgs(base, { 'set-file': ['parameters.#key=-'] }, piped('line 1\nline 2\n')))!),
        { parameters: { api: { baseUrl: 'http://x/' }, '#key': 'line 1\nline 2' } },
      );
    });

    it('refuses, before reading anything: a secret path without a # key, two readers of standard input, --file - from a terminal', async () => {
      const refused = async (args: Parameters<typeof bodyFromArgs>[1], input: BodyInput, pattern: RegExp) => {
        await assert.rejects(
          bodyFromArgs(base, args, input),
          (e: Error) => e instanceof UserError && pattern.test(e.message) && !e.message.includes(SECRET),
        );
      };
      await refused(
        { 'set-secret': ['parameters.token'] },
        piped(SECRET),
        /--set-secret parameters\.token: the last key must start with "#".*use --set-file PATH=FILE/,
      );
      await refused({ 'set-secret': ['parameters.list[0]'] }, piped(SECRET), /the last key must start with "#"/);
      await refused(
        { file: '-', 'set-secret': ['parameters.#a'] },
        piped(SECRET),
        /--file - and --set-secret parameters\.#a both read standard input/,
      );
      await refused(
        { 'set-secret': ['parameters.#a', 'parameters.#b'] },
        piped(SECRET),
        /--set-secret parameters\.#a and --set-secret parameters\.#b both read standard input/,
      );
      await refused(
        { 'set-file': ['a=-', 'b=-'] },
        piped(SECRET),
        /--set-file a=- and --set-file b=- both read standard input/,
      );
      await refused(
        { file: '-' },
        atTerminal([]),
        /--file - reads the body from standard input, which is a terminal here/,
      );
      await refused({ 'set-file': ['parameters.x'] }, piped(SECRET), /--set-file takes path=FILE/);
      await refused({ 'set-file': [`parameters.x=${path.join(dir, 'missing')}`] }, piped(SECRET), /No such file: /);
    });

    it('refuses an empty secret and one too large, never showing the value', async () => {
      await assert.rejects(
        bodyFromArgs(base, { 'set-secret': ['parameters.#a'] }, piped('\n')),
        /--set-secret parameters\.#a: the value is empty \(nothing came on standard input\); nothing was changed/,
      );
      await assert.rejects(
        bodyFromArgs(base, { 'set-secret': ['parameters.#a'] }, atTerminal([''])),
        /the value is empty \(nothing was typed\)/,
      );
      const huge = Readable.from(
        (function* () {
          for (let i = 0; i < 5; i++) yield Buffer.alloc(1024 * 1024, 0x61);
        })(),
      );
      await assert.rejects(
        bodyFromArgs(base, { 'set-secret': ['parameters.#a'] }, { stdin: huge, prompt: async () => '' }),
        /standard input holds more than 4194304 bytes/,
      );
      await assert.rejects(
        bodyFromArgs(base, { 'set-file': ['parameters.x=-'] }, piped(Buffer.from([0xff]))),
        /standard input is not UTF-8 text/,
      );
    });
  });
});
