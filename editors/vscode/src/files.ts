// The one door through which the extension reads a file an agent names (an
// edit permission's target, for "Show the diff"): the agent chooses the
// path, so the path alone never decides. A file is read only when, resolved
// through every link, it lies inside one of the given roots (the workspace
// folders, the request's directory), is a regular file (never a device,
// FIFO or socket: /dev/zero would fill memory, a FIFO would block) and is at
// most MAX_BYTES long. The type is checked again on the open descriptor, so
// a file swapped for a FIFO after the check is still not read. No `vscode`
// here: node's tests use it as it is.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as l10n from './l10n';

/** Larger files are not shown beside their edit (the diff alone is). */
export const MAX_BYTES = 4 * 1024 * 1024;

export type Refusal = 'outside' | 'not-file' | 'too-large' | 'unreadable';

/** What may be shown of an edit's file: its text ('' for a new file), or why not. */
export type EditFile =
  | { kind: 'file'; resolved: string; text: string }
  | { kind: 'refused'; named: string; resolved: string; why: Refusal };

/**
 * `named` with every link resolved; for a file that does not exist yet (the
 * edit creates it, maybe in new folders), its nearest existing folder
 * resolved and the rest appended (a rest with `.` or `..` is not trusted).
 */
export function resolvePath(named: string): string | undefined {
  try {
    return fs.realpathSync.native(named);
  } catch {
    // Not there (yet): resolved below.
  }
  const rest: string[] = [];
  let folder = named;
  for (;;) {
    try {
      fs.lstatSync(folder);
      break;
    } catch {
      const name = path.basename(folder);
      if (name === '' || name === '.' || name === '..' || path.dirname(folder) === folder) return undefined;
      rest.unshift(name);
      folder = path.dirname(folder);
    }
  }
  try {
    const base = fs.realpathSync.native(folder);
    return rest.length > 0 && fs.statSync(base).isDirectory() ? path.join(base, ...rest) : undefined;
  } catch {
    return undefined;
  }
}

/** Is `resolved` one of `roots` (resolved through links too) or inside one? */
export function insideRoots(resolved: string, roots: Array<string | null | undefined>): boolean {
  return roots.some((root) => {
    if (!root) return false;
    let real: string;
    try {
      real = fs.realpathSync.native(root);
    } catch {
      return false;
    }
    const relative = path.relative(real, resolved);
    return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
  });
}

/**
 * The text of the file `named` (an absolute path) when it may be read: see
 * the header. `open` gives the text of a document the person has open
 * (unsaved changes included), asked only once the path is known to be inside.
 */
export function readEditFile(named: string, roots: Array<string | null | undefined>, open?: (resolved: string) => string | undefined): EditFile {
  const resolved = resolvePath(named);
  if (!resolved || !insideRoots(resolved, roots)) return { kind: 'refused', named, resolved: resolved ?? named, why: 'outside' };
  const refused = (why: Refusal): EditFile => ({ kind: 'refused', named, resolved, why });
  const opened = open?.(resolved);
  if (opened !== undefined) return { kind: 'file', resolved, text: opened };
  let before: fs.Stats;
  try {
    before = fs.lstatSync(resolved);
  } catch {
    return { kind: 'file', resolved, text: '' };
  }
  if (!before.isFile()) return refused('not-file');
  if (before.size > MAX_BYTES) return refused('too-large');
  let fd: number;
  try {
    // Non-blocking, never the controlling terminal: if a FIFO or a tty was
    // put there since the stat, opening it does not wait.
    fd = fs.openSync(resolved, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0) | (fs.constants.O_NOCTTY ?? 0));
  } catch {
    return refused('unreadable');
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile() || stat.ino !== before.ino || stat.dev !== before.dev) return refused('not-file');
    // Bounded even if the file grows while it is read.
    const buffer = Buffer.alloc(Math.min(stat.size, MAX_BYTES) + 1);
    let length = 0;
    for (;;) {
      const n = fs.readSync(fd, buffer, length, buffer.length - length, length);
      if (n === 0) break;
      length += n;
      if (length === buffer.length) break;
    }
    if (length > MAX_BYTES) return refused('too-large');
    return { kind: 'file', resolved, text: new TextDecoder().decode(buffer.subarray(0, length)) };
  } catch {
    return refused('unreadable');
  } finally {
    fs.closeSync(fd);
  }
}

/** What the person is told when an edit's file is not opened. */
export function refusalNote(file: Extract<EditFile, { kind: 'refused' }>): string {
  const where = file.resolved === file.named ? file.named : `${file.named} → ${file.resolved}`;
  switch (file.why) {
    case 'outside':
      return l10n.t('{0} is outside the project: the file was not opened (the diff alone is shown).', where);
    case 'not-file':
      return l10n.t('{0} is not a regular file: it was not opened (the diff alone is shown).', where);
    case 'too-large':
      return l10n.t('{0} is too large to show beside the diff: it was not opened.', where);
    case 'unreadable':
      return l10n.t('{0} cannot be read: the diff alone is shown.', where);
  }
}
