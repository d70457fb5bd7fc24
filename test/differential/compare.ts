import type { SentRequest, SideResult } from './run-case.js';

/**
 * Headers that differ by design or by HTTP library and carry no meaning for the API: the
 * User-Agent (a listed deviation), transport headers, and Content-Length (bodies are compared).
 */
export const IGNORED_HEADERS = new Set(['user-agent', 'accept-encoding', 'connection', 'host', 'content-length']);

export interface Difference {
  kind: 'exit' | 'requests' | 'output';
  /** what differs, stable across shrinking (used to keep shrinking on the same difference) */
  where: string;
  detail: string;
}

export function describeRequest(r: SentRequest): string {
  const headers = r.headers
    .filter(([name]) => !IGNORED_HEADERS.has(name))
    .map(([name, value]) => `${name}: ${value}`)
    .sort()
    .join('\n  ');
  return `${r.method} ${r.target}${headers ? `\n  ${headers}` : ''}${r.body ? `\n  body: ${r.body}` : ''}`;
}

/**
 * How gex's requests must match the reference's: in the same sequence, or — when the case lets
 * gex fetch child jobs ahead (`concurrency`) — as the same set, and after a failure GE's requests
 * among gex's (gex may have sent later ones ahead before the failure surfaced).
 */
export type RequestOrder = 'sequence' | 'set';

/** Whether a case's parameters let gex send requests out of GE's order. */
export function requestOrderOf(parameters: unknown): RequestOrder {
  const ahead = (value: unknown): boolean => {
    if (Array.isArray(value)) return value.some(ahead);
    if (value === null || typeof value !== 'object') return false;
    const entries = '$entries' in value ? (value as { $entries: [string, unknown][] }).$entries : Object.entries(value);
    return entries.some(([key, v]) => (key === 'concurrency' && typeof v === 'number' && v > 1) || ahead(v));
  };
  return ahead(parameters) ? 'set' : 'sequence';
}

/** The differences between the reference's run and gex's run of one case. */
export function compareSides(reference: SideResult, gex: SideResult, order: RequestOrder = 'sequence'): Difference[] {
  const differences: Difference[] = [];
  if (reference.code !== gex.code || reference.timedOut !== gex.timedOut) {
    const error = errorShape(gex.log) ?? errorShape(reference.log);
    differences.push({
      kind: 'exit',
      where: `exit ${reference.code}→${gex.code}${error ? `: ${error}` : ''}`,
      detail: `exit code ${reference.code}${reference.timedOut ? ' (timed out)' : ''} vs gex ${gex.code}${gex.timedOut ? ' (timed out)' : ''}`,
    });
  }
  if (order === 'set') differences.push(...requestSetDifferences(reference, gex));
  else differences.push(...requestSequenceDifferences(reference, gex));
  appendOutputDifferences(reference, gex, differences);
  return differences;
}

function requestSetDifferences(reference: SideResult, gex: SideResult): Difference[] {
  const theirs = reference.requests.map(describeRequest).sort();
  const ours = gex.requests.map(describeRequest).sort();
  const failed = reference.code !== 0 || gex.code !== 0;
  const left = new Map<string, number>();
  for (const r of ours) left.set(r, (left.get(r) ?? 0) + 1);
  for (const r of theirs) {
    const n = left.get(r) ?? 0;
    if (n === 0)
      return [
        { kind: 'requests', where: 'request missing', detail: `a request GE sent that gex did not:\n  GE:  ${r}` },
      ];
    left.set(r, n - 1);
  }
  const extra = [...left].find(([, n]) => n > 0);
  if (extra && !failed)
    return [
      { kind: 'requests', where: 'request extra', detail: `a request gex sent that GE did not:\n  gex: ${extra[0]}` },
    ];
  return [];
}

function requestSequenceDifferences(reference: SideResult, gex: SideResult): Difference[] {
  const differences: Difference[] = [];
  const count = Math.max(reference.requests.length, gex.requests.length);
  for (let i = 0; i < count; i++) {
    const a = reference.requests[i];
    const b = gex.requests[i];
    const left = a ? describeRequest(a) : '(none)';
    const right = b ? describeRequest(b) : '(none)';
    if (left !== right) {
      differences.push({
        kind: 'requests',
        where: `request ${!a ? 'extra' : !b ? 'missing' : requestPart(a, b)}`,
        detail: `request #${i + 1}:\n  GE:  ${left}\n  gex: ${right}`,
      });
      break;
    }
  }
  return differences;
}

function appendOutputDifferences(reference: SideResult, gex: SideResult, differences: Difference[]): void {
  if (reference.code === 0 && gex.code === 0) {
    const names = [...new Set([...reference.outputs.keys(), ...gex.outputs.keys()])].sort();
    for (const name of names) {
      const a = normalizedOutput(name, reference.outputs.get(name));
      const b = normalizedOutput(name, gex.outputs.get(name));
      if (a && b && a.equals(b)) continue;
      const where = `output ${name.endsWith('.manifest') ? 'manifest' : name === 'state.json' ? 'state' : 'table'}${!a ? ' extra' : !b ? ' missing' : ''}`;
      differences.push({
        kind: 'output',
        where,
        detail: `out/${name}:\n  GE:  ${a ? show(a) : '(no file)'}\n  gex: ${b ? show(b) : '(no file)'}`,
      });
    }
  }
}

/**
 * The state's `time.previousStart` is the run's start time in seconds, so two runs a second apart
 * differ there by nature: the value is compared as a placeholder (its presence still counts).
 */
function normalizedOutput(name: string, bytes: Buffer | undefined): Buffer | undefined {
  if (!bytes || name !== 'state.json') return bytes;
  return Buffer.from(bytes.toString('utf8').replace(/"previousStart":\d+/g, '"previousStart":"<run start>"'));
}

/**
 * The shape of the last error a log reports, with quoted text and numbers blanked, so shrinking
 * keeps to the same failure rather than drifting to another with the same exit codes.
 */
export function errorShape(log: string): string | undefined {
  const line = log
    .split('\n')
    .filter((l) => /\bERROR\b|logger\.(ERROR|CRITICAL)/.test(l))
    .pop();
  if (!line) return undefined;
  const message = line.replace(/^.*?(ERROR:?|CRITICAL:)\s*/, '').replace(/ \{"errFile".*$/, '');
  return message
    .replace(/'[^']*'|"[^"]*"|`[^`]*`/g, "''")
    .replace(/\d+/g, '0')
    .replace(/http:\/\/\S+/g, 'URL')
    .slice(0, 120);
}

function requestPart(a: SentRequest, b: SentRequest): string {
  if (a.method !== b.method) return 'method';
  if (a.target.split('?')[0] !== b.target.split('?')[0]) return 'path';
  if (a.target !== b.target) return 'query';
  if (a.body !== b.body) return 'body';
  return 'headers';
}

function show(bytes: Buffer): string {
  const text = bytes.toString('utf8');
  return JSON.stringify(text.length > 600 ? `${text.slice(0, 600)}…` : text);
}

/** A short stable key of a case's differences: shrinking keeps a smaller case only if it keeps this. */
export function signature(differences: Difference[]): string | null {
  if (differences.length === 0) return null;
  return differences[0].where;
}
