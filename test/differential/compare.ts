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

/** The differences between the reference's run and gex's run of one case. */
export function compareSides(reference: SideResult, gex: SideResult): Difference[] {
  const differences: Difference[] = [];
  if (reference.code !== gex.code || reference.timedOut !== gex.timedOut) {
    const error = errorShape(gex.log) ?? errorShape(reference.log);
    differences.push({ kind: 'exit', where: `exit ${reference.code}→${gex.code}${error ? `: ${error}` : ''}`, detail: `exit code ${reference.code}${reference.timedOut ? ' (timed out)' : ''} vs gex ${gex.code}${gex.timedOut ? ' (timed out)' : ''}` });
  }
  const count = Math.max(reference.requests.length, gex.requests.length);
  for (let i = 0; i < count; i++) {
    const a = reference.requests[i];
    const b = gex.requests[i];
    const left = a ? describeRequest(a) : '(none)';
    const right = b ? describeRequest(b) : '(none)';
    if (left !== right) {
      differences.push({ kind: 'requests', where: `request ${!a ? 'extra' : !b ? 'missing' : requestPart(a, b)}`, detail: `request #${i + 1}:\n  GE:  ${left}\n  gex: ${right}` });
      break;
    }
  }
  if (reference.code === 0 && gex.code === 0) {
    const names = [...new Set([...reference.outputs.keys(), ...gex.outputs.keys()])].sort();
    for (const name of names) {
      const a = normalizedOutput(name, reference.outputs.get(name));
      const b = normalizedOutput(name, gex.outputs.get(name));
      if (a && b && a.equals(b)) continue;
      const where = `output ${name.endsWith('.manifest') ? 'manifest' : name === 'state.json' ? 'state' : 'table'}${!a ? ' extra' : !b ? ' missing' : ''}`;
      differences.push({ kind: 'output', where, detail: `out/${name}:\n  GE:  ${a ? show(a) : '(no file)'}\n  gex: ${b ? show(b) : '(no file)'}` });
    }
  }
  return differences;
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
