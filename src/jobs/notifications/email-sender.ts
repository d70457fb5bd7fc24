import nodemailer, { type SMTPSentMessageInfo, type Transporter } from 'nodemailer';
import { describeNetworkError, isCertificateError } from '../../common/network-errors.js';
import { SecretMasker } from '../../common/secret-masker.js';
import { emailMessage, oneLine, type EmailMessage } from './email-message.js';
import type { AttemptOutcome, NotificationPayload } from './notification-payload.js';
import type { SmtpSettings } from './smtp-settings.js';
import { isEmailAddress } from './subscription-input.js';

export interface EmailSenderOptions {
  /**
   * Bounds each wait of an attempt: the connection, the greeting, the TLS upgrade, every reply
   * (default 30 s). A whole attempt is bounded at twice this.
   */
  timeoutMs?: number;
  /** CA certificates (PEM) the relay's certificate may chain to, besides Node's own (and NODE_EXTRA_CA_CERTS) */
  ca?: string | string[];
}

export const DEFAULT_EMAIL_TIMEOUT_MS = 30_000;
/** the longest outcome message */
const MAX_OUTCOME_MESSAGE = 300;

/** nodemailer's error: its code, the SMTP reply that caused it, the system error beneath */
interface SmtpError {
  code?: string;
  originalCode?: string;
  responseCode?: number;
  response?: string;
  command?: string;
  timeoutType?: string;
  message?: string;
  rejectedErrors?: SmtpError[];
}

/** errors no attempt can get past without the operator: the same message, settings and relay fail the same way */
const FINAL_CODES = new Set(['ECONFIG', 'ENOAUTH', 'EAUTH', 'EENVELOPE', 'EMESSAGE', 'ESTREAM', 'EMAXRECIPIENTS']);

/**
 * The e-mail channel of notifications: one message per call over the operator's relay (nodemailer's
 * SMTP transport), the outcome an attempt of the outbox records. Not pooled: every attempt opens its
 * own connection and closes it, so an attempt's outcome is that connection's alone (a relay that
 * dropped an idle pooled connection, or hangs one, affects nothing else), nothing is held open
 * between notifications, which are rare, and `close` has only attempts in flight to end.
 * `send` never rejects; no password, AUTH exchange or transcript reaches an outcome.
 */
export class EmailSender {
  readonly #settings: SmtpSettings;
  readonly #timeoutMs: number;
  readonly #transport: Transporter<SMTPSentMessageInfo>;
  readonly #masker = new SecretMasker();
  readonly #closing = new AbortController();
  readonly #inFlight = new Set<Promise<AttemptOutcome>>();

  constructor(settings: SmtpSettings, options: EmailSenderOptions = {}) {
    this.#settings = settings;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_EMAIL_TIMEOUT_MS;
    if (!(Number.isInteger(this.#timeoutMs) && this.#timeoutMs > 0))
      throw new RangeError(`timeoutMs must be a whole number of milliseconds above 0, got ${this.#timeoutMs}`);
    const credentials = settings.credentials();
    if (credentials) {
      this.#masker.add(credentials.pass);
      // AUTH PLAIN's and LOGIN's base64, should a relay echo them
      this.#masker.add(`\0${credentials.user}\0${credentials.pass}`);
    }
    this.#transport = nodemailer.createTransport({
      host: settings.host,
      port: settings.port,
      secure: settings.security === 'tls',
      requireTLS: settings.security === 'starttls-required',
      auth: credentials,
      connectionTimeout: this.#timeoutMs,
      greetingTimeout: this.#timeoutMs,
      socketTimeout: this.#timeoutMs,
      dnsTimeout: this.#timeoutMs,
      socketCloseTimeout: Math.min(this.#timeoutMs, 1_000),
      tls: { minVersion: 'TLSv1.2', ...(options.ca === undefined ? {} : { ca: options.ca }) },
      logger: false,
      debug: false,
      disableFileAccess: true,
      disableUrlAccess: true,
    });
  }

  /** Sends `payload`'s e-mail to `address`; `signal` stops the attempt (an outcome `retry`). */
  send(address: string, payload: NotificationPayload, signal?: AbortSignal): Promise<AttemptOutcome> {
    if (this.#closing.signal.aborted) return Promise.resolve(retry(null, 'the e-mail sender is closed'));
    if (!isEmailAddress(address)) return Promise.resolve(final(null, 'the recipient is not an e-mail address'));
    const attempt = this.#attempt(address, payload, signal);
    this.#inFlight.add(attempt);
    void attempt.finally(() => this.#inFlight.delete(attempt));
    return attempt;
  }

  /** Ends the attempts in flight (each an outcome `retry`) and refuses new ones. */
  async close(): Promise<void> {
    this.#closing.abort();
    await Promise.allSettled([...this.#inFlight]);
    this.#transport.close();
  }

  async #attempt(address: string, payload: NotificationPayload, signal?: AbortSignal): Promise<AttemptOutcome> {
    let message: EmailMessage;
    try {
      message = emailMessage(payload, this.#settings.from);
    } catch (err) {
      // a payload without the fields it must have: every attempt would fail the same way
      return final(null, this.#bounded(`the notification cannot be written as an e-mail: ${(err as Error).message}`));
    }
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), 2 * this.#timeoutMs);
    const signals = [deadline.signal, this.#closing.signal, ...(signal ? [signal] : [])];
    try {
      const info = await this.#transport.sendMail({
        from: { name: 'gex', address: this.#settings.from },
        to: address,
        subject: message.subject,
        text: message.text,
        messageId: message.messageId,
        headers: message.headers,
        signal: AbortSignal.any(signals),
      });
      // one recipient: refused, it would have been an error; an empty list is checked all the same
      if (info.accepted.length === 0) return this.#failed(info.rejectedErrors?.[0] ?? {}, signals);
      return {
        outcome: 'delivered',
        statusCode: replyCode(info.response),
        message: this.#bounded(`accepted: ${info.response}`),
      };
    } catch (err) {
      return this.#failed(err as SmtpError, signals);
    } finally {
      clearTimeout(timer);
    }
  }

  #failed(err: SmtpError, [deadline, closing, caller]: AbortSignal[]): AttemptOutcome {
    const relay = `${this.#settings.host}:${this.#settings.port}`;
    // all recipients refused: the refusal is the first one's
    const reply = err.responseCode ?? err.rejectedErrors?.[0]?.responseCode;
    if (reply !== undefined && reply >= 400) {
      const response = err.response ?? err.rejectedErrors?.[0]?.response ?? '';
      const command = /^[A-Z][A-Z ]{0,19}/.exec(err.command ?? err.rejectedErrors?.[0]?.command ?? '')?.[0].trim();
      const text = this.#bounded(
        `${err.code === 'ETLS' ? 'STARTTLS refused: ' : ''}SMTP ${reply}${command ? ` to ${command}` : ''}: ${response.replace(/^\d{3}[ -]?/, '')}`,
      );
      return reply >= 500 ? final(reply, text) : retry(reply, text);
    }
    if (err.code === 'EABORT') {
      if (deadline.aborted) return retry(null, `no answer from ${relay} within ${2 * this.#timeoutMs} ms in all`);
      if (closing.aborted) return retry(null, 'the e-mail sender was closed during the attempt');
      return retry(null, caller?.aborted ? 'the attempt was stopped' : 'the attempt was aborted');
    }
    if (err.code === 'ETIMEDOUT') {
      // the greeting's wait and the idle socket's are the same length: either may end a silent server's attempt
      const waited =
        err.timeoutType === 'CONNECT_TIMEOUT'
          ? `no connection to ${relay}`
          : err.timeoutType === 'UPGRADE_TIMEOUT'
            ? `the TLS upgrade with ${relay} did not finish`
            : `no reply from ${relay}`;
      return retry(null, `${waited} within ${this.#timeoutMs} ms`);
    }
    const system = err.originalCode;
    if (
      err.code === 'ETLS' ||
      /^(ERR_SSL_|ERR_TLS_|EPROTO$)/.test(system ?? '') ||
      isCertificateError({ code: system })
    )
      return retry(null, this.#bounded(`TLS with ${relay} failed: ${tlsProblem(err)}`));
    if (err.code === 'EDNS')
      return retry(null, this.#bounded(`cannot resolve ${this.#settings.host}: ${system ?? ''}`));
    if (err.code === 'ENOAUTH') return final(null, `${relay} wants a login: put user:password@ in the relay URL`);
    if (err.code !== undefined && FINAL_CODES.has(err.code))
      return final(null, this.#bounded(`${err.code}: ${err.message ?? 'refused'}`));
    // ESOCKET, ECONNECTION, a reset, a refused connection, anything else: the relay may take it later
    const cause = system ?? err.code;
    return retry(
      null,
      this.#bounded(`cannot send through ${relay}: ${cause ? describeNetworkError({ code: cause }) : 'error'}`),
    );
  }

  /** one line, the password in none of its forms, at most MAX_OUTCOME_MESSAGE characters */
  #bounded(text: string): string {
    return oneLine(this.#masker.mask(text), MAX_OUTCOME_MESSAGE);
  }
}

const retry = (statusCode: number | null, message: string): AttemptOutcome => ({
  outcome: 'retry',
  statusCode,
  message,
});
const final = (statusCode: number | null, message: string): AttemptOutcome => ({
  outcome: 'final',
  statusCode,
  message,
});

/** A TLS failure in words: OpenSSL's reason without its location, what to do about a certificate or a wrong port. */
function tlsProblem(err: SmtpError): string {
  const code = err.originalCode ?? '';
  // "80AC…:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:…/ssl3_record.c:350:"
  const reason = (
    /:error:[0-9A-F]+:[^:]*:[^:]*:([^:]+)/.exec(err.message ?? '')?.[1] ??
    err.message ??
    'handshake failed'
  )
    // Node 24's own hint (--use-system-ca): the advice below names gex's way
    .replace(/; if the root CA is installed locally, try running Node\.js with --use-system-ca/, '');
  if (isCertificateError({ code }))
    return `${reason} (${code}); trust the relay's CA with NODE_EXTRA_CA_CERTS, or fix its certificate`;
  if (/wrong version number/i.test(reason))
    return `${reason}: the relay does not speak TLS on this port (smtp:// rather than smtps://?)`;
  return reason;
}

function replyCode(response: string): number | null {
  const match = /^([2-5]\d\d)/.exec(response);
  return match ? Number(match[1]) : null;
}
