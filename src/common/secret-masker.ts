import { isJsonObject, type JsonObject, type JsonValue } from '../json/index.js';
import { phpToString } from '../php/index.js';
import { secretEncodings } from './secret-encodings.js';

const HIDDEN = '[hidden]';

/** Values that change with every request (signatures) are remembered only this many at a time. */
const RECENT_LIMIT = 32;

/**
 * Replaces every known secret in a text with `[hidden]`, in every form gex can give it (see
 * secretEncodings: URL and form encodings, base64 — also inside a longer base64 text — and JSON
 * escapes of both PHP and JavaScript, nested). All forms of all secrets are one compiled regular
 * expression, rebuilt only when a secret is added: masking runs on every log line.
 */
export class SecretMasker {
  private readonly secrets = new Set<string>();
  private readonly variants = new Set<string>();
  private pattern: RegExp | null = null;
  /** per-request values (OAuth signatures): the most recent ones, in a small pattern of their own */
  private recent: string[] = [];
  private recentPattern: RegExp | null = null;

  add(secret: string): void {
    if (secret === '' || this.secrets.has(secret)) return;
    this.secrets.add(secret);
    for (const form of secretEncodings(secret)) this.variants.add(form);
    this.pattern = null;
  }

  /**
   * Registers a credential that is valid for one request only (a signature): it is hidden while it
   * is among the most recent ones, so per-request values do not grow the masker without limit.
   */
  addRecent(value: string): void {
    if (value === '' || this.secrets.has(value)) return;
    const at = this.recent.indexOf(value);
    if (at >= 0) {
      // known already (a value computed the same for every request): only its age changes
      this.recent.push(...this.recent.splice(at, 1));
      return;
    }
    this.recent.push(value);
    if (this.recent.length > RECENT_LIMIT) this.recent.shift();
    this.recentPattern = null;
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
    if (this.variants.size > 0) {
      this.pattern ??= compile(this.variants);
      text = text.replace(this.pattern, HIDDEN);
    }
    if (this.recent.length > 0) {
      this.recentPattern ??= compile(new Set(this.recent.flatMap((v) => [...secretEncodings(v)])));
      text = text.replace(this.recentPattern, HIDDEN);
    }
    return text;
  }

  /**
   * A copy of a JSON document (a state) with secrets hidden in its keys and string values — except
   * under `#` keys: those are secrets the store encrypts, and the next run needs them.
   */
  maskValues(value: JsonValue): JsonValue {
    if (typeof value === 'string') return this.mask(value);
    if (Array.isArray(value)) return value.map((v) => this.maskValues(v));
    if (!isJsonObject(value)) return value;
    const out: JsonObject = new Map();
    for (const [k, v] of value) {
      if (k.startsWith('#')) out.set(k, v);
      else out.set(this.mask(k), this.maskValues(v));
    }
    return out;
  }
}

/**
 * All forms as one pattern, built as a trie (`ab(?:c|d)`): a flat alternation of hundreds of
 * similar literals makes V8 fall back to a slow matcher, the trie keeps masking a line at a few
 * microseconds. Where a form is a prefix of another the longer one is tried first, so a secret
 * containing another one is hidden whole.
 */
function compile(forms: Set<string>): RegExp {
  const root: TrieNode = { end: false, next: new Map() };
  for (const form of forms) {
    let node = root;
    for (const token of tokens(form)) {
      let child = node.next.get(token);
      if (!child) node.next.set(token, (child = { end: false, next: new Map() }));
      node = child;
    }
    node.end = true;
  }
  return new RegExp(emit(root), 'g');
}

interface TrieNode {
  end: boolean;
  next: Map<string, TrieNode>;
}

function emit(node: TrieNode): string {
  const branches = [...node.next].map(([token, child]) => token + emitChain(child));
  if (branches.length === 0) return '';
  const group = branches.length === 1 && !node.end ? branches[0] : `(?:${branches.join('|')})`;
  return node.end ? `${branches.length === 1 ? `(?:${branches[0]})` : group}?` : group;
}

/** A run of single-child nodes without recursion (secrets may be long, e.g. a PEM key). */
function emitChain(start: TrieNode): string {
  let out = '';
  let node = start;
  while (!node.end && node.next.size === 1) {
    const [token, child] = node.next.entries().next().value as [string, TrieNode];
    out += token;
    node = child;
  }
  return out + emit(node);
}

/**
 * A form as pattern tokens, one per character. Hex digits of `%XX` and `\uXXXX` escapes match in
 * either case: other encoders (and APIs echoing a request) write them in lower case.
 */
function tokens(form: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < form.length; i++) {
    const ch = form[i];
    const hexDigits =
      ch === '%' && /^[0-9A-Fa-f]{2}/.test(form.slice(i + 1, i + 3))
        ? 2
        : ch === '\\' && /^u[0-9A-Fa-f]{4}/.test(form.slice(i + 1, i + 6))
          ? 5
          : 0;
    out.push(escapeRegExp(ch));
    for (let k = 1; k <= hexDigits; k++) out.push(anyCase(form[i + k]));
    i += hexDigits;
  }
  return out;
}

function anyCase(ch: string): string {
  const lower = ch.toLowerCase();
  const upper = ch.toUpperCase();
  return lower === upper ? escapeRegExp(ch) : `[${lower}${upper}]`;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
