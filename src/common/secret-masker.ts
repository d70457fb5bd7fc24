import { phpToString, type JsonValue } from '../php-compat/index.js';

const HIDDEN = '[hidden]';

/**
 * Replaces every known secret in a text with `[hidden]`. Like Keboola's runner it also hides the
 * forms a secret takes when it travels inside JSON, a URL or an Authorization header.
 */
export class SecretMasker {
  private readonly variants = new Set<string>();
  private pattern: RegExp | null = null;

  add(secret: string): void {
    if (secret === '') return;
    const forms = [
      secret,
      JSON.stringify(secret).slice(1, -1),
      encodeURIComponent(secret),
      encodeURIComponent(secret).replace(/%20/g, '+'),
      Buffer.from(secret, 'utf8').toString('base64'),
    ];
    for (const form of forms) if (form !== '') this.variants.add(form);
    this.pattern = null;
  }

  /** Registers the values of every `#`-prefixed key found anywhere in `value`. */
  addFromConfig(value: JsonValue | undefined): void {
    if (value instanceof Map) {
      for (const [k, v] of value) {
        if (k.startsWith('#')) this.addLeaves(v);
        else this.addFromConfig(v);
      }
    } else if (Array.isArray(value)) {
      for (const v of value) this.addFromConfig(v);
    }
  }

  private addLeaves(value: JsonValue): void {
    if (value === null) return;
    if (value instanceof Map) for (const v of value.values()) this.addLeaves(v);
    else if (Array.isArray(value)) for (const v of value) this.addLeaves(v);
    else this.add(phpToString(value));
  }

  get size(): number {
    return this.variants.size;
  }

  mask(text: string): string {
    if (this.variants.size === 0) return text;
    if (!this.pattern) {
      // longest first, so a secret that contains another one is hidden as a whole
      const sorted = [...this.variants].sort((a, b) => b.length - a.length);
      this.pattern = new RegExp(sorted.map(escapeRegExp).join('|'), 'g');
    }
    return text.replace(this.pattern, HIDDEN);
  }
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
