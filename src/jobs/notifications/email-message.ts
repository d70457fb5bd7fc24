import { createHash } from 'node:crypto';
import { formatDuration } from '../../common/text.js';
import type { NotificationPayload } from './notification-payload.js';

/** A notification as an e-mail: plain text only, every user-given name made safe for a header. */
export interface EmailMessage {
  subject: string;
  text: string;
  /** `<gex-…@domain>`, the same for every attempt of an event: a repeat can be recognised */
  messageId: string;
  headers: Record<string, string>;
}

/** the longest subject, and the longest name in it */
export const MAX_SUBJECT = 200;
const MAX_SUBJECT_NAME = 60;
/** the longest name or time in the body, and the longest message (a job's error) */
const MAX_BODY_NAME = 200;
export const MAX_BODY_MESSAGE = 4000;

const VERBS: Record<string, string> = {
  failed: 'failed',
  succeeded: 'succeeded',
  'succeeded-with-warning': 'succeeded with a warning',
  'processing-long': 'is running long',
};

// control and format characters (line breaks, NUL, bidi overrides, zero-width marks), line and paragraph separators
const NOT_IN_A_LINE = /[\p{Cc}\p{Cf}\u2028\u2029]/gu;
const NOT_IN_A_BODY = /[\p{Cf}\u2028\u2029]|(?![\n\t])\p{Cc}/gu;

/** `text` on one line: control and format characters are spaces, runs of space one, at most `max` characters (then `…`). */
export function oneLine(text: string, max: number): string {
  return cut(text.replace(NOT_IN_A_LINE, ' ').replace(/\s+/g, ' ').trim(), max);
}

/** `text` as lines of a plain-text body: `\n` line ends, no other control or format characters, at most `max` characters. */
function textBlock(text: string, max: number): string {
  return cut(text.replace(/\r\n?/g, '\n').replace(NOT_IN_A_BODY, ' ').trim(), max);
}

function cut(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

const named = (thing: { id: string; name: string }, max: number) =>
  oneLine(thing.name, max) === '' ? oneLine(thing.id, max) : oneLine(thing.name, max);

const withId = (thing: { id: string; name: string }) => {
  const name = oneLine(thing.name, MAX_BODY_NAME);
  const id = oneLine(thing.id, MAX_BODY_NAME);
  return name === '' || name === id ? id : `${name} (${id})`;
};

/** `payload.job.url` when it is an http(s) URL, as its normalised form (no control characters) */
function jobPage(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.href : undefined;
  } catch {
    return undefined;
  }
}

function describeSeconds(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds)) return 'unknown';
  const span = formatDuration(seconds * 1000);
  return seconds >= 60 ? `${span} (${Math.round(seconds)} s)` : span;
}

/** The e-mail of one notification, sent from `from` (its domain is the Message-ID's). */
export function emailMessage(payload: NotificationPayload, from: string): EmailMessage {
  const { job } = payload;
  const phaseEvent = payload.eventType.startsWith('phase-');
  const verb = VERBS[payload.eventType.replace(/^(phase-)?job-/, '')] ?? oneLine(payload.eventType, 40);
  const jobId = oneLine(job.id, 40);
  const phase = payload.phase ? oneLine(payload.phase.id, 40) : undefined;
  const what = phaseEvent && phase !== undefined ? `${jobId} phase ${phase}` : jobId;
  const where = `${named(job.component, MAX_SUBJECT_NAME)}/${named(job.configuration, MAX_SUBJECT_NAME)}`;
  const subject = oneLine(`gex: job ${what} ${verb} — ${where}`, MAX_SUBJECT);

  const lines = [`Job ${what} ${verb}.`, ''];
  const field = (label: string, value: string) => lines.push(`${`${label}:`.padEnd(16)}${value}`);
  field('Job', jobId);
  field('Status', oneLine(job.status, 40));
  field('Component', withId(job.component));
  field('Configuration', withId(job.configuration));
  field('Project', withId(payload.project));
  field('Branch', oneLine(payload.branch.id, 40));
  if (payload.phase) field('Phase', `${phase} (job ${oneLine(payload.phase.jobId, 40)})`);
  field('Started', job.startTime === null ? 'not started' : oneLine(job.startTime, 64));
  field('Ended', job.endTime === null ? 'not ended' : oneLine(job.endTime, 64));
  field('Duration', describeSeconds(job.durationSeconds ?? payload.currentDuration ?? null));
  if (payload.averageDuration !== undefined) field('Usual duration', describeSeconds(payload.averageDuration));
  // Keboola's overrun is a fraction (0.75: 75 % longer than usual)
  if (payload.durationOvertimePercentage !== undefined && Number.isFinite(payload.durationOvertimePercentage))
    field('Over by', `${Math.round(payload.durationOvertimePercentage * 100)} %`);
  const message = textBlock(job.message, MAX_BODY_MESSAGE);
  if (message !== '') {
    lines.push('', payload.eventType.endsWith('failed') ? 'Error:' : 'Message:');
    for (const line of message.split('\n')) lines.push(`  ${line}`.trimEnd());
  }
  const page = jobPage(job.url);
  if (page !== undefined) lines.push('', `Job page: ${page}`);
  lines.push('', '-- ', `gex notification ${oneLine(payload.eventType, 40)}, event ${oneLine(payload.eventId, 200)}`);

  const token = createHash('sha256').update(payload.eventId).digest('hex').slice(0, 32);
  return {
    subject,
    text: `${lines.join('\n')}\n`,
    messageId: `<gex-${token}@${from.slice(from.lastIndexOf('@') + 1)}>`,
    headers: {
      'X-Gex-Event-Id': oneLine(payload.eventId, 200),
      // RFC 3834: an automatic message, no vacation replies to it
      'Auto-Submitted': 'auto-generated',
    },
  };
}
