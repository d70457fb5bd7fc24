import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { repoRoot } from '../support/cli.js';
import { anchorsOf, brokenLinks, githubSlug, linksOf, withoutCodeSpans } from './markdown-links.js';

const docsFolder = path.join(repoRoot, 'docs');
const docPages = readdirSync(docsFolder)
  .filter((name) => name.endsWith('.md'))
  .sort();
const readme = path.join(repoRoot, 'README.md');

describe('documentation links', () => {
  describe('the checker', () => {
    it('makes anchors as GitHub does', () => {
      assert.equal(githubSlug('`gex run` — run an extraction'), 'gex-run--run-an-extraction');
      assert.equal(githubSlug('`gex configs`, `gex rows`, `gex state`'), 'gex-configs-gex-rows-gex-state');
      assert.equal(githubSlug('Next-URL pagination (`response.url`)'), 'next-url-pagination-responseurl');
      assert.equal(githubSlug("The runner's output and input_mapping"), 'the-runners-output-and-input_mapping');
      assert.equal(githubSlug('See [the store](store.md) ü'), 'see-the-store-ü');
    });

    it('numbers repeated headings and ignores headings inside fenced code', () => {
      const anchors = anchorsOf(
        '# Output\n\n```sh\n# not a heading\n```\n\n## Output\n### Output ###\n<a id="kept"></a>\n',
      );
      assert.deepEqual([...anchors].sort(), ['kept', 'output', 'output-1', 'output-2']);
    });

    it('finds links outside code only, with their lines', () => {
      const text =
        'See [a](a.md#x) and `[b](b.md)`.\n\n```\n[c](c.md)\n```\n[d]: <d.md>\n![e](img/e.png "title") [f\ng](#h)\n';
      assert.deepEqual(linksOf(text), [
        { target: 'a.md#x', line: 1 },
        { target: 'img/e.png', line: 7 },
        { target: '#h', line: 8 },
        { target: 'd.md', line: 6 },
      ]);
    });

    it('keeps an unclosed backtick literal and never lets a code span cross a blank line', () => {
      assert.equal(withoutCodeSpans('a ` b [x](y)'), 'a ` b [x](y)');
      assert.equal(withoutCodeSpans('`a\n\n[x](y)`'), '`a\n\n[x](y)`');
      assert.equal(withoutCodeSpans('``a ` b`` c'), `${' '.repeat(9)} c`);
    });

    it('reports a missing file, a missing anchor, an anchor into code and a link out of the root', () => {
      const root = mkdtempSync(path.join(tmpdir(), 'gex-links-'));
      try {
        writeFileSync(path.join(root, 'b.md'), '## Real heading\n');
        writeFileSync(path.join(root, 'src.ts'), '');
        writeFileSync(
          path.join(root, 'a.md'),
          '# Top\n[ok](b.md#real-heading) [self](#top) [web](https://example.com/x#y) [folder](.)\n' +
            '[missing](nope.md)\n[anchor](b.md#nope)\n[code](src.ts#L1)\n[out](../outside.md)\n[here](#nowhere)\n',
        );
        assert.deepEqual(brokenLinks(path.join(root, 'a.md'), root), [
          'a.md:3: nope.md: no such file or folder',
          'a.md:4: b.md#nope: no heading with the anchor #nope',
          'a.md:5: src.ts#L1: an anchor into a file that is not Markdown',
          'a.md:6: ../outside.md: leaves the repository',
          'a.md:7: #nowhere: no heading with the anchor #nowhere',
        ]);
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    });
  });

  it('finds the README and the docs pages', () => {
    assert.ok(docPages.length >= 10, `docs/*.md: ${docPages.join(', ')}`);
  });

  it('resolves every relative link and anchor in README.md and docs/*.md', () => {
    const problems = [readme, ...docPages.map((name) => path.join(docsFolder, name))].flatMap((file) =>
      brokenLinks(file, repoRoot),
    );
    assert.deepEqual(problems, []);
  });

  it('lists every docs page in the README', () => {
    const linked = new Set(linksOf(readFileSync(readme, 'utf8')).map((link) => link.target.split('#')[0]));
    assert.deepEqual(
      docPages.filter((name) => !linked.has(`docs/${name}`)),
      [],
    );
  });

  it('keeps the README a guide a newcomer reads to the end (the reference lives in docs/)', () => {
    const lines = readFileSync(readme, 'utf8').split('\n').length;
    assert.ok(lines <= 300, `README.md has ${lines} lines`);
  });
});
