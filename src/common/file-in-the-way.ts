import { lstatSync } from 'node:fs';
import path from 'node:path';

/**
 * The entry on the way to `target` that is not a folder (a file where the path needs a folder,
 * the cause of ENOTDIR, or of EEXIST from mkdir), or `target` itself when it exists and is not a
 * folder; undefined when none is (the error had another cause). Reads the file system: for
 * turning an error into a message, not for deciding anything.
 */
export function fileInTheWay(target: string): string | undefined {
  const absolute = path.resolve(target);
  const { root } = path.parse(absolute);
  let current = root;
  for (const part of absolute.slice(root.length).split(path.sep).filter(Boolean)) {
    current = path.join(current, part);
    let isFolder: boolean;
    try {
      isFolder = lstatSync(current).isDirectory();
    } catch {
      return undefined;
    }
    if (!isFolder) return current;
  }
  return undefined;
}
