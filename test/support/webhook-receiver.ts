import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One POST the receiver got. */
export interface ReceivedHook {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/** How the receiver answers a request: a status, a redirect, never (a hang), or an endless body. */
export type HookAnswer = number | { redirect: string } | 'hang' | 'endless';

export interface WebhookReceiver {
  url: string;
  received: ReceivedHook[];
  /** how the n-th request (0-based) is answered; 200 by default */
  answer: (request: ReceivedHook, n: number) => HookAnswer;
  /** how long after a request arrived it is answered (0 by default: at once) */
  delayMs: number;
  /** resolves once `count` requests have arrived */
  until(count: number): Promise<void>;
  /** how many requests carried each delivery id */
  repeats(): Map<string, number>;
  close(): Promise<void>;
}

/** Whether `header` is `sha256=` + the HMAC-SHA256 of `body` under `secret` (what a receiver checks). */
export function signatureHolds(secret: string, body: string, header: string | string[] | undefined): boolean {
  if (typeof header !== 'string' || !header.startsWith('sha256=')) return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(body).digest('hex'));
  const got = Buffer.from(header.slice('sha256='.length));
  return got.length === expected.length && timingSafeEqual(got, expected);
}

/** A real HTTP server on 127.0.0.1 taking webhook POSTs, answering as `answer` says. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedHook[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const hook: ReceivedHook = {
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      const n = received.push(hook) - 1;
      for (const w of waiters.filter((x) => received.length >= x.count)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
      const answer = receiver.answer(hook, n);
      if (receiver.delayMs > 0 && answer !== 'hang') {
        const timer = setTimeout(() => respond(res, answer), receiver.delayMs);
        res.on('close', () => clearTimeout(timer));
      } else respond(res, answer);
    });
  });
  const respond = (res: http.ServerResponse, answer: HookAnswer) => {
    if (answer === 'hang') {
      hanging.add(res);
      return;
    }
    if (answer === 'endless') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write('x'.repeat(16_384)), 1);
      res.on('close', () => clearInterval(timer));
      return;
    }
    if (typeof answer === 'object') {
      res.writeHead(302, { location: answer.redirect });
      res.end();
      return;
    }
    res.writeHead(answer, { 'content-type': 'text/plain' });
    res.end(answer < 300 ? 'ok' : `refused with ${answer}`);
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const receiver: WebhookReceiver = {
    url: `http://127.0.0.1:${port}`,
    received,
    answer: () => 200,
    delayMs: 0,
    until(count) {
      if (received.length >= count) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    repeats() {
      const counts = new Map<string, number>();
      for (const r of received) {
        const id = String(r.headers['x-gex-delivery-id']);
        counts.set(id, (counts.get(id) ?? 0) + 1);
      }
      return counts;
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return receiver;
}
