/**
 * Keboola Storage API routes gex does not implement, by what they are for: a request for one of
 * them is answered `501 notImplemented` "Not implemented in gex: <what>" instead of a 404 that
 * suggests a wrong URL (docs/storage-api.md#not-implemented). This list is the one place to
 * change when gex implements one of them: the implemented route then matches first and the entry
 * goes. Paths are relative to `/v2/storage/` (the branch form `/v2/storage/branch/{id}/` too);
 * `*` is one path segment, `**` any rest (also none).
 */
const UNIMPLEMENTED: ReadonlyArray<readonly [template: string, what: string]> = [
  ['files/*/refresh', 'refreshing File Storage upload credentials (gex uploads go to the server itself)'],
  ['files/*/tags**', 'changing the tags of a file (give them when the file is prepared)'],
  ['tables/*/import', 'table import'],
  ['buckets/*/tables-definition', 'typed table creation'],
  ['buckets/*/tables', 'table creation over HTTP (gex loads tables from runs: docs/storage-tables.md)'],
  ['tables/*/rows', 'deleting table rows over HTTP'],
  ['tables/*/columns/**', 'adding or removing table columns'],
  ['tables/*/primary-key/**', 'changing a primary key'],
  ['tables/*/definition', 'typed table definitions'],
  ['tables/*/snapshots', 'table snapshots'],
  ['snapshots/**', 'table snapshots'],
  ['tables/*/profile/**', 'table profiles'],
  ['tables/*/alias-*', 'alias tables'],
  ['buckets/*/table-aliases', 'alias tables'],
  ['tables/*/pull', 'pulling tables from the default branch'],
  ['tables/*/optimize', 'table optimization'],
  ['tables/*/events', 'events'],
  ['buckets/*/events', 'events'],
  ['tokens/*/events', 'events'],
  ['events/**', 'events'],
  ['buckets/*/share**', 'bucket sharing'],
  ['buckets/*/links/**', 'bucket linking'],
  ['buckets/*/owner', 'bucket owners'],
  ['buckets/*/listing', 'bucket listings'],
  ['buckets/*/refresh**', 'external buckets'],
  ['buckets/*/scheduled-tasks/**', 'scheduled tasks'],
  ['buckets/register**', 'external buckets'],
  ['shared-buckets', 'bucket sharing'],
  ['buckets/*', 'changing a bucket (gex creates, lists, reads and deletes buckets)'],
  ['tables/*', 'changing a table (gex lists, reads, previews and deletes tables)'],
  ['workspaces/**', 'workspaces'],
  ['components/*/configs/*/workspaces', 'workspaces'],
  ['triggers/**', 'table triggers'],
  ['jobs', 'the list of Storage jobs (GET /v2/storage/jobs/{id} answers a finished job)'],
  ['tokens/*/share', 'sending tokens by e-mail'],
  ['tokens/*', 'changing a token (gex creates, lists, reads, refreshes and deletes tokens)'],
  ['dev-branches/**', 'development branches (gex has only the default branch)'],
  ['merge-request/**', 'merge requests (gex has only the default branch)'],
  ['components/*/configs/*/diff', 'development branches (gex has only the default branch)'],
  ['components/*/configs/*/rebase', 'development branches (gex has only the default branch)'],
  ['metadata/**', 'branch metadata'],
  ['search/**', 'search'],
  ['global-search', 'search'],
  ['scheduled-tasks/**', 'scheduled tasks'],
  ['tickets/**', 'tickets'],
  ['stats', 'project statistics'],
  ['listings', 'bucket listings'],
  ['webalize/**', 'name normalization'],
  ['validate/**', 'name validation'],
];

function compile(template: string): RegExp {
  let source = '';
  template.split('/').forEach((segment, i) => {
    if (segment === '**') {
      source += i === 0 ? '.*' : '(?:/.*)?';
      return;
    }
    const literal = segment.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
    source +=
      (i === 0 ? '' : '/') + literal.replaceAll('**', '\u0000').replaceAll('*', '[^/]*').replaceAll('\u0000', '.*');
  });
  return new RegExp(`^${source}$`);
}

const COMPILED = UNIMPLEMENTED.map(([template, what]) => ({ pattern: compile(template), what }));

/** `/v2/storage/[branch/{id}/]` and the rest of a path; null outside the Storage API. */
function storagePath(path: string): string | null {
  const match = /^\/v2\/storage\/(?:branch\/[^/]+\/)?(.*?)\/*$/.exec(path);
  return match ? match[1] : null;
}

/** What the Keboola route at `path` (no query) is for, when gex does not implement it; else null. */
export function unimplementedFeature(path: string): string | null {
  const rest = storagePath(path);
  if (rest === null || rest === '') return null;
  for (const { pattern, what } of COMPILED) if (pattern.test(rest)) return what;
  return null;
}
