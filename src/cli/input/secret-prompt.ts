import { UserError } from '../../common/errors.js';
import { MAX_VALUE_BYTES } from './input-source.js';

/** A terminal to read from: process.stdin when it is a TTY, or a stand-in in tests. */
export interface TerminalInput {
  setRawMode(raw: boolean): unknown;
  on(event: 'data', listener: (chunk: Buffer | string) => void): unknown;
  removeListener(event: 'data', listener: (chunk: Buffer | string) => void): unknown;
  resume(): unknown;
  pause(): unknown;
}

export interface PromptOptions {
  input?: TerminalInput;
  output?: { write(text: string): unknown };
  /** Ctrl-C: raw mode turns it into a key, so the prompt stops the command as SIGINT would */
  interrupt?: () => void;
}

/**
 * Asks for a value at the terminal without showing it (no echo, not even `*`s: their number
 * would tell the length). Backspace and Ctrl-U edit, Enter ends, Ctrl-C stops the command, Ctrl-D
 * ends the input; escape sequences (arrow keys) are ignored. The terminal is put back as it was
 * however the prompt ends.
 */
export function promptHidden(prompt: string, options: PromptOptions = {}): Promise<string> {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stderr;
  const interrupt = options.interrupt ?? (() => process.kill(process.pid, 'SIGINT'));
  return new Promise((resolve, reject) => {
    let value = '';
    // 0: text; 1: after ESC; 2: inside a CSI (ESC [) or SS3 (ESC O) sequence
    let escape = 0;
    const finish = (error?: Error) => {
      input.removeListener('data', onData);
      input.setRawMode(false);
      input.pause();
      output.write('\n');
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (chunk: Buffer | string) => {
      for (const char of String(chunk)) {
        if (escape === 1) {
          escape = char === '[' || char === 'O' ? 2 : 0;
          continue;
        }
        if (escape === 2) {
          // the final byte of a sequence (ESC [ A, ESC [ 3 ~, ESC O P) is in @ … ~
          if (char >= '@' && char <= '~') escape = 0;
          continue;
        }
        if (char === '\r' || char === '\n') return finish();
        if (char === '\u0003') {
          finish(new UserError('GEX_INPUT_INVALID', 'Stopped: nothing was entered'));
          return interrupt();
        }
        if (char === '\u0004') return finish();
        if (char === '\u007f' || char === '\b') value = Array.from(value).slice(0, -1).join('');
        else if (char === '\u0015') value = '';
        else if (char === '\u001b') escape = 1;
        else if (char >= ' ') value += char;
        if (Buffer.byteLength(value) > MAX_VALUE_BYTES)
          return finish(
            new UserError('GEX_INPUT_INVALID', `The value entered is longer than ${MAX_VALUE_BYTES} bytes`),
          );
      }
    };
    // no echo before the prompt shows: a person (or a script) may type as soon as they see it
    input.setRawMode(true);
    input.on('data', onData);
    input.resume();
    output.write(prompt);
  });
}
