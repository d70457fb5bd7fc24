import { execFile, spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { track } from './children.js';
import { repoRoot } from './cli.js';

/** Debian's python3, which has python3-aiosmtpd: the one on PATH may be another (pyenv's) without it */
export const SYSTEM_PYTHON = '/usr/bin/python3';
const SINK = path.join(repoRoot, 'test', 'support', 'smtp_sink.py');
const run = promisify(execFile);

/** Why the SMTP tests cannot run here (for a loud skip), or undefined when they can. */
export async function smtpSinkMissing(): Promise<string | undefined> {
  try {
    await run(SYSTEM_PYTHON, ['-c', 'import aiosmtpd'], { timeout: 10_000 });
  } catch {
    return `no aiosmtpd for ${SYSTEM_PYTHON} (Debian: apt-get install python3-aiosmtpd)`;
  }
  try {
    await run('openssl', ['version'], { timeout: 10_000 });
  } catch {
    return 'no openssl to make the test certificate (apt-get install openssl)';
  }
  return undefined;
}

/** A self-signed certificate for 127.0.0.1 and localhost, made now in `dir` (P-256, valid two days). */
export async function selfSignedCertificate(dir: string): Promise<{ cert: string; key: string; pem: string }> {
  const cert = path.join(dir, 'cert.pem');
  const key = path.join(dir, 'key.pem');
  await run(
    'openssl',
    [
      ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'],
      ...['-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=localhost'],
      ...['-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'],
    ],
    { timeout: 30_000 },
  );
  return { cert, key, pem: await readFile(cert, 'utf8') };
}

export interface SmtpSinkOptions {
  /** the folder messages are stored in */
  dir: string;
  /** AUTH required with this login */
  auth?: { user: string; password: string };
  /** STARTTLS offered, required, or TLS from the start, with this certificate */
  tls?: { mode: 'starttls' | 'starttls-required' | 'implicit'; cert: string; key: string };
}

/** What the sink stored of one message (test/support/smtp_sink.py). */
export interface SunkMessage {
  mailFrom: string;
  rcptTos: string[];
  subject: string;
  headers: Array<[string, string]>;
  contentTypes: string[];
  text: string | null;
  login: string | null;
  tls: boolean;
  /** the message as received */
  raw: string;
}

export interface SmtpSink {
  port: number;
  /** the messages stored so far, in the order they came */
  messages(): Promise<SunkMessage[]>;
  stop(): Promise<void>;
}

/** Starts test/support/smtp_sink.py (aiosmtpd) on a free port of 127.0.0.1. */
export async function startSmtpSink(options: SmtpSinkOptions): Promise<SmtpSink> {
  const args = [SINK, '--dir', options.dir];
  if (options.auth) args.push('--user', options.auth.user, '--password', options.auth.password);
  if (options.tls) {
    args.push('--cert', options.tls.cert, '--key', options.tls.key);
    if (options.tls.mode === 'starttls-required') args.push('--require-starttls');
    if (options.tls.mode === 'implicit') args.push('--implicit-tls');
  }
  const child = track(spawn(SYSTEM_PYTHON, args, { stdio: ['pipe', 'pipe', 'pipe'] }));
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = `${stderr}${chunk}`.slice(-4000)));
  const port = await new Promise<number>((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => reject(new Error(`the SMTP sink did not start in 15 s: ${stderr}`)), 15_000);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const match = /listening (\d+)/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the SMTP sink exited (${code}) before listening: ${stderr}`));
    });
  });
  return {
    port,
    async messages() {
      const names = (await readdir(options.dir)).filter((name) => /^\d+\.json$/.test(name));
      names.sort((a, b) => parseInt(a, 10) - parseInt(b, 10));
      return Promise.all(
        names.map(async (name) => {
          const base = path.join(options.dir, name.replace(/\.json$/, ''));
          const facts = JSON.parse(await readFile(`${base}.json`, 'utf8')) as Omit<SunkMessage, 'raw'>;
          return { ...facts, raw: await readFile(`${base}.eml`, 'latin1') };
        }),
      );
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** A TCP server that accepts connections and never says a word (no SMTP greeting). */
export async function startSilentServer(): Promise<{ port: number; stop(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as net.AddressInfo).port,
    async stop() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
