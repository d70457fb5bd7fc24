import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Relative links and anchors of Markdown files, resolved as GitHub renders them: headings become
 * anchors by GitHub's slug rule, and nothing inside code (fenced blocks, code spans) is a link or
 * a heading.
 */

/** A link as written: its target and the line it starts on. */
export interface MarkdownLink {
  target: string;
  line: number;
}

/** `text` with fenced code blocks blanked out (their lines kept empty, so line numbers stay). */
export function withoutFencedCode(text: string): string {
  let fence: string | null = null;
  return text
    .split('\n')
    .map((line) => {
      const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
      if (fence === null) {
        if (marker === undefined) return line;
        fence = marker;
        return '';
      }
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker)
        fence = null;
      return '';
    })
    .join('\n');
}

/**
 * `text` with code spans blanked out: a run of n backticks opens a span that the next run of exactly
 * n backticks closes, within one paragraph (no blank line between); an unclosed run is literal.
 */
export function withoutCodeSpans(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    if (text[i] !== '`') {
      out += text[i];
      i += 1;
      continue;
    }
    let run = 1;
    while (text[i + run] === '`') run += 1;
    const close = closingRun(text, i + run, run);
    if (close === -1) {
      out += text.slice(i, i + run);
      i += run;
      continue;
    }
    out += text.slice(i, close + run).replace(/[^\n]/g, ' ');
    i = close + run;
  }
  return out;
}

function closingRun(text: string, from: number, length: number): number {
  let i = from;
  while (i < text.length) {
    if (text[i] === '\n' && /^\n[ \t]*\n/.test(text.slice(i, i + 80))) return -1;
    if (text[i] !== '`') {
      i += 1;
      continue;
    }
    let run = 1;
    while (text[i + run] === '`') run += 1;
    if (run === length) return i;
    i += run;
  }
  return -1;
}

/** GitHub's anchor for a heading's text: inline markup dropped, lower case, punctuation removed, spaces → `-`. */
export function githubSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/`/g, '');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a Markdown text defines: its ATX headings (repeated slugs get `-1`, `-2`, …) and `<a id|name="…">`. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutFencedCode(markdown).split('\n')) {
    const heading = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(line)?.[1];
    if (heading !== undefined) {
      const slug = githubSlug(heading);
      const count = seen.get(slug) ?? 0;
      seen.set(slug, count + 1);
      anchors.add(count === 0 ? slug : `${slug}-${count}`);
    }
    for (const match of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1]);
  }
  return anchors;
}

/** The inline links, images and reference definitions of a Markdown text, outside code. */
export function linksOf(markdown: string): MarkdownLink[] {
  const text = withoutCodeSpans(withoutFencedCode(markdown));
  const lineAt = (index: number) => text.slice(0, index).split('\n').length;
  const links: MarkdownLink[] = [];
  for (const match of text.matchAll(/\]\(\s*(<[^>]*>|[^)\s]*)(?:\s+"[^"]*")?\s*\)/g)) {
    links.push({ target: match[1].replace(/^<|>$/g, ''), line: lineAt(match.index) });
  }
  for (const match of text.matchAll(/^ {0,3}\[[^\]]+\]:[ \t]*(\S+)/gm)) {
    links.push({ target: match[1].replace(/^<|>$/g, ''), line: lineAt(match.index) });
  }
  return links;
}

/**
 * What is wrong with each relative link of `file` (inside `root`): a missing file or folder, a
 * target outside `root`, an anchor its Markdown file does not define, an anchor into a file that is
 * not Markdown. Links with a scheme (`https:`, `mailto:`) are not checked.
 */
export function brokenLinks(file: string, root: string): string[] {
  const problems: string[] = [];
  const where = (link: MarkdownLink) => `${path.relative(root, file)}:${link.line}: ${link.target}`;
  for (const link of linksOf(readFileSync(file, 'utf8'))) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) continue;
    const hash = link.target.indexOf('#');
    const filePart = decodeURIComponent(hash === -1 ? link.target : link.target.slice(0, hash));
    const anchor = hash === -1 ? null : decodeURIComponent(link.target.slice(hash + 1));
    const targetFile = filePart === '' ? file : path.resolve(path.dirname(file), filePart);
    if (path.relative(root, targetFile).startsWith('..')) {
      problems.push(`${where(link)}: leaves the repository`);
      continue;
    }
    if (!existsSync(targetFile)) {
      problems.push(`${where(link)}: no such file or folder`);
      continue;
    }
    if (anchor === null) continue;
    if (!targetFile.endsWith('.md')) {
      problems.push(`${where(link)}: an anchor into a file that is not Markdown`);
      continue;
    }
    if (!anchorsOf(readFileSync(targetFile, 'utf8')).has(anchor))
      problems.push(`${where(link)}: no heading with the anchor #${anchor}`);
  }
  return problems;
}
