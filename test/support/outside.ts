import { mkdir, readdir, readFile, readlink, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * A folder outside the data folder that planted links point into, and a way to prove that nothing
 * in it changed: every entry below it with its kind and content.
 */
export class Outside {
  /** a folder with a file, for links planted where gex expects a folder */
  readonly dir: string;
  /** a file, for links planted where gex expects a file */
  readonly file: string;
  /** a path that does not exist, for dangling links: it must still not exist afterwards */
  readonly missing: string;

  constructor(readonly root: string) {
    this.dir = path.join(root, 'victim-dir');
    this.file = path.join(root, 'victim.txt');
    this.missing = path.join(root, 'not-there');
  }

  async create(): Promise<void> {
    await mkdir(path.join(this.dir, 'tables'), { recursive: true });
    await writeFile(path.join(this.dir, 'keep.txt'), 'keep me\n');
    await writeFile(path.join(this.dir, 'state.json'), '{"mine":true}');
    await writeFile(this.file, 'keep me too\n');
  }

  /** Everything below the root: `path kind content`, sorted. */
  async snapshot(): Promise<string[]> {
    const entries = await readdir(this.root, { recursive: true, withFileTypes: true });
    const lines: string[] = [];
    for (const e of entries) {
      const file = path.join(e.parentPath, e.name);
      const name = path.relative(this.root, file);
      if (e.isSymbolicLink()) lines.push(`${name} link ${await readlink(file)}`);
      else if (e.isDirectory()) lines.push(`${name} dir`);
      else lines.push(`${name} file ${await readFile(file, 'utf8')}`);
    }
    return lines.sort();
  }

  /** A link at `at` to this folder's victim of the kind asked for. */
  async plant(at: string, kind: PlantedLink): Promise<string> {
    const target = kind === 'dir' ? this.dir : kind === 'file' ? this.file : this.missing;
    await mkdir(path.dirname(at), { recursive: true });
    await symlink(target, at);
    return target;
  }
}

/** What a planted link points to: a folder outside, a file outside, or nothing (dangling). */
export type PlantedLink = 'dir' | 'file' | 'dangling';
