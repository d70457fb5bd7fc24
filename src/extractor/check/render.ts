import { displayText, quoteForLog } from '../../common/log-text.js';
import type { SecretMasker } from '../../common/secret-masker.js';
import {
  unitOk,
  type CheckReport,
  type JobCheck,
  type ProbeResult,
  type RequestPreview,
  type UnitCheck,
} from './report.js';

/**
 * The report as text for a person, and as JSON for a program. Values from configurations and
 * responses are hostile: in text each is one line with control and invisible characters escaped;
 * in JSON the characters JSON.stringify leaves raw (DEL, C1 controls, bidi overrides, line
 * separators) are escaped as well. The whole output passes the masker once more at the end.
 */

export function renderText(report: CheckReport, masker: SecretMasker): string {
  const lines: string[] = [];
  for (const warning of report.warnings) lines.push(`warning: ${displayText(warning)}`);
  for (const unit of report.units) lines.push(...unitLines(unit));
  const warnings =
    report.warnings.length +
    report.units.reduce((n, u) => n + u.warnings.length + u.jobs.filter((j) => j.response?.warning).length, 0);
  const notCounted = report.units.filter((u) => !u.runs && !unitOk(u)).length;
  const notes = [
    ...(warnings > 0 ? [`${warnings} warning${warnings === 1 ? '' : 's'}`] : []),
    ...(notCounted > 0
      ? [
          `problems of ${notCounted} disabled row${notCounted === 1 ? '' : 's'} not counted: a run skips ${notCounted === 1 ? 'it' : 'them'}`,
        ]
      : []),
  ];
  lines.push(`Result: ${report.ok ? 'OK' : 'FAILED'}${notes.length > 0 ? ` (${notes.join('; ')})` : ''}`);
  return masker.mask(`${lines.join('\n')}\n`);
}

export function renderJson(report: CheckReport, masker: SecretMasker): string {
  // JSON.stringify escapes C0 controls; the rest of what could break or hide a terminal line is escaped here
  const text = JSON.stringify(report, null, 2).replace(
    /[\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}]/gu,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return masker.mask(`${text}\n`);
}

function unitLines(unit: UnitCheck): string[] {
  const lines = [`${displayText(unit.label)}: ${unit.valid ? 'valid' : 'invalid'}`];
  if (!unit.runs) lines.push('  (a run skips this disabled row: what is wrong with it does not fail the check)');
  for (const warning of unit.warnings) lines.push(`  warning: ${displayText(warning)}`);
  if (unit.error) lines.push(`  error: ${displayText(unit.error.message)}`);
  for (const table of unit.tables ?? []) lines.push(`  ${displayText(table)}`);
  for (const job of unit.jobs) lines.push(...jobLines(job));
  return lines;
}

function jobLines(job: JobCheck): string[] {
  const lines = [
    `  job ${quoteForLog(job.job)}${job.iteration === null ? '' : ` (iteration ${job.iteration})`}: first request`,
  ];
  if (job.request) lines.push(...requestLines(job.request));
  if (job.response) lines.push(...responseLines(job.response));
  return lines;
}

function requestLines(request: RequestPreview): string[] {
  const lines = [`    ${request.method} ${displayText(request.url)}`];
  for (const [name, value] of request.headers) lines.push(`    ${displayText(name)}: ${displayText(value)}`);
  if (request.body !== undefined) lines.push(`    body: ${displayText(request.body)}`);
  for (const note of request.notes) lines.push(`    (${note})`);
  return lines;
}

function responseLines(response: ProbeResult): string[] {
  if (response.error !== undefined) return [`    -> failed after ${response.ms} ms: ${displayText(response.error)}`];
  const lines: string[] = [];
  const status =
    response.status === undefined
      ? 'not read'
      : `${response.status}${response.statusMessage ? ` ${displayText(response.statusMessage)}` : ''}`;
  lines.push(
    `    -> ${status} in ${response.ms} ms${response.bytes === undefined ? '' : `, ${response.bytes} bytes`}${response.records === undefined ? '' : `, ${response.records} record${response.records === 1 ? '' : 's'}`}`,
  );
  if (response.warning) lines.push(`    warning: ${displayText(response.warning)}`);
  if (response.topLevelKeys)
    lines.push(
      `    no records found; top-level keys: ${response.topLevelKeys.map(quoteForLog).join(', ') || '(none)'}`,
    );
  for (const table of response.tables ?? [])
    lines.push(`    table ${displayText(table.table)}: ${table.columns.map(quoteForLog).join(', ')}`);
  return lines;
}
