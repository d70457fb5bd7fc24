import { gexVersion } from '../../common/version.js';

/** `gex-<version>` from gex's package.json (`gex` when it cannot be found). */
export function gexRevision(): string {
  const version = gexVersion();
  return version ? `gex-${version}` : 'gex';
}
