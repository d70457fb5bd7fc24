import { UserError } from '../common/errors.js';
import { excerptId } from '../common/log-text.js';
import { checkBucketId } from '../store/tables/table-id.js';

/** A configuration id usable in a bucket name as it is: Keboola bucket names hold only these. */
const BUCKET_NAME_PART = /^[A-Za-z0-9_-]+$/;
/** Longest configuration id (and component id) put in a default bucket name: the name stays readable and bounded. */
const MAX_CONFIG_ID_IN_BUCKET = 200;

/**
 * The bucket of tables whose manifest names no destination, as Keboola's runner names it for a
 * component with `default_bucket`: `in.c-<component id, each character outside A-Z a-z 0-9 - as
 * "-">-<configuration id>`. The configuration id is not rewritten: two ids that rewrite alike
 * (`a.b`, `a/b`) would share a bucket and overwrite each other's tables, so an id a bucket name
 * cannot hold is refused (only when a table needs the default bucket).
 */
export function defaultBucketId(componentId: string, configId: string): string {
  const problem = !BUCKET_NAME_PART.test(configId)
    ? 'a bucket name holds only letters, digits, "-" and "_"'
    : configId.length > MAX_CONFIG_ID_IN_BUCKET
      ? `it is ${configId.length} characters long, a bucket name takes at most ${MAX_CONFIG_ID_IN_BUCKET} of it`
      : null;
  if (problem) {
    throw new UserError(
      'GEX_TABLE_LOAD_REFUSED',
      `The default bucket in.c-<component>-<configuration id> cannot be made from configuration id ${excerptId(configId)}: ` +
        `${problem}. Set parameters.config.outputBucket (or a destination in the table's manifest), or use a short configuration id of those characters.`,
    );
  }
  return checkBucketId(
    `in.c-${componentId.slice(0, MAX_CONFIG_ID_IN_BUCKET).replace(/[^A-Za-z0-9-]/g, '-')}-${configId}`,
  );
}

/** The table a file without a manifest destination is loaded into: `<default bucket>.<file name without .csv>`. */
export function defaultDestination(bucketId: string, fileName: string): string {
  return `${bucketId}.${fileName.endsWith('.csv') ? fileName.slice(0, -'.csv'.length) : fileName}`;
}
