/**
 * The hosts that have answered at least once in a run. Generic Extractor retries a connection
 * that cannot be made (refused, unreachable, timed out) up to ten times over ~17 minutes, which
 * suits a server that restarts mid-run but turns a mistyped `baseUrl` port into a quarter of an
 * hour of waiting. So a host that has not answered once in the run gets retries for at most
 * FIRST_CONTACT_MS; once it has answered, GE's whole schedule applies. What a run sends and
 * writes is GE's either way: only how long it waits before failing differs.
 */

/** How long a request keeps retrying to connect to a host that has not answered in this run. */
export const FIRST_CONTACT_MS = 30_000;

/** Hosts remembered at most (next-page URLs come from responses): beyond, a host counts as not answered yet. */
const MAX_HOSTS = 10_000;

export class ReachedHosts {
  private readonly hosts = new Set<string>();

  /** `host:port` of an http(s) URL (the scheme's port when none is given), as messages name it. */
  static hostOf(url: string): string {
    try {
      const parsed = new URL(url);
      return `${parsed.hostname}:${parsed.port || (parsed.protocol === 'https:' ? '443' : '80')}`;
    } catch {
      return url;
    }
  }

  /** A response (of any status) came from the host of `url`. */
  answered(url: string): void {
    if (this.hosts.size < MAX_HOSTS) this.hosts.add(ReachedHosts.hostOf(url));
  }

  hasAnswered(url: string): boolean {
    return this.hosts.has(ReachedHosts.hostOf(url));
  }
}
