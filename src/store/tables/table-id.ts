import { UserError } from '../../common/errors.js';
import { excerptId, excerptText } from '../../common/log-text.js';

/** A Storage table id `in.c-<bucket>.<table>` split into its bucket id and table name. */
export interface TableId {
  /** `in.c-<bucket>` or `out.c-<bucket>` */
  readonly bucketId: string;
  readonly name: string;
}

/** Longest bucket id, table name or column name, in characters: the metadata stays bounded. */
export const MAX_NAME_LENGTH = 1000;

/** Characters that cannot be shown or stored safely in a name (NUL, line breaks, bidi controls). */
const UNSAFE_CHARACTER = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

/** Half of a UTF-16 surrogate pair without its other half: no database stores it as it is. */
const LONE_SURROGATE = /\p{Cs}/u;

const BUCKET_ID = /^(in|out)\.c-([^.]+)$/s;

/** Why `name` cannot be a bucket, table or column name, or null when it can. */
export function nameProblem(name: string): string | null {
  if (name === '') return 'is empty';
  if (name.length > MAX_NAME_LENGTH) return `is longer than ${MAX_NAME_LENGTH} characters`;
  if (UNSAFE_CHARACTER.test(name)) return 'contains a control or invisible character';
  // both databases would store U+FFFD instead, so two different names could become one
  if (LONE_SURROGATE.test(name)) return 'is not valid Unicode (it has half of a surrogate pair)';
  return null;
}

export function checkBucketId(bucketId: string): string {
  const problem = BUCKET_ID.test(bucketId)
    ? nameProblem(bucketId)
    : 'is not of the form in.c-<bucket> or out.c-<bucket>';
  if (problem) throw new UserError('GEX_TABLE_REQUEST_INVALID', `Bucket id ${excerptId(bucketId)} ${problem}.`);
  return bucketId;
}

/** Parses a manifest's `destination`; `where` names its source in the error. */
export function parseTableId(destination: unknown, where = 'table id'): TableId {
  const text = typeof destination === 'string' ? destination : '';
  const m = /^((?:in|out)\.c-[^.]+)\.(.+)$/s.exec(text);
  if (!m) {
    const shown =
      typeof destination === 'string'
        ? excerptId(destination)
        : excerptText(JSON.stringify(destination ?? null) ?? 'undefined');
    throw new UserError(
      'GEX_TABLE_REQUEST_INVALID',
      `${where}: ${shown} is not a table id of the form in.c-<bucket>.<table> (or out.c-<bucket>.<table>).`,
    );
  }
  const [, bucketId, name] = m;
  for (const [what, value] of [
    ['bucket', bucketId],
    ['table name', name],
  ] as const) {
    const problem = nameProblem(value);
    if (problem)
      throw new UserError('GEX_TABLE_REQUEST_INVALID', `${where}: the ${what} of ${excerptId(text)} ${problem}.`);
  }
  return { bucketId, name };
}

export function tableIdText(id: TableId): string {
  return `${id.bucketId}.${id.name}`;
}
