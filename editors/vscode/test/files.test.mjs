// The one door to an edit's file (src/files.ts): "Show the diff" reads only
// a regular file inside the workspace or the request's directory, resolved
// through links, bounded; never a secret elsewhere, a device or a FIFO.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import test from 'node:test';

const require = createRequire(import.meta.url);
const files = require('../out/files.js');

/** A project and, outside it, a secret; removed after the test. */
function layout(t) {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ask-lsp-files-')));
  t.after(() => fs.rmSync(base, { recursive: true, force: true }));
  const project = path.join(base, 'project');
  fs.mkdirSync(path.join(project, 'src'), { recursive: true });
  fs.mkdirSync(path.join(base, 'home', '.ssh'), { recursive: true });
  const secret = path.join(base, 'home', '.ssh', 'id_ed25519');
  fs.writeFileSync(secret, 'SECRET-KEY-MATERIAL\n');
  fs.writeFileSync(path.join(project, 'src', 'main.rs'), 'fn old() {}\n');
  return { base, project, secret };
}

test('a regular file of the project is read; a new one (in new folders) is empty; an open document wins', (t) => {
  const { project } = layout(t);
  assert.deepEqual(files.readEditFile(path.join(project, 'src/main.rs'), [project]),
    { kind: 'file', resolved: path.join(project, 'src/main.rs'), text: 'fn old() {}\n' });
  assert.deepEqual(files.readEditFile(path.join(project, 'new/dir/x.rs'), [undefined, null, project]),
    { kind: 'file', resolved: path.join(project, 'new/dir/x.rs'), text: '' });
  assert.deepEqual(files.readEditFile(path.join(project, 'src/main.rs'), [project], () => 'unsaved\n').text, 'unsaved\n');
});

test('outside every root: a secret by its path, by .., by a symlink in the project, a new file climbing out: refused, not read', (t) => {
  const { base, project, secret } = layout(t);
  fs.symlinkSync(secret, path.join(project, 'innocent.rs'));
  let asked = 0;
  const open = () => {
    asked += 1;
    return 'SECRET-KEY-MATERIAL';
  };
  for (const named of [secret, `${project}/../home/.ssh/id_ed25519`, path.join(project, 'innocent.rs'), `${project}/../nope/../x`]) {
    const file = files.readEditFile(named, [project, path.join(base, 'elsewhere')], open);
    assert.equal(file.kind, 'refused', named);
    assert.equal(file.why, 'outside', named);
    assert.equal(file.text, undefined);
  }
  assert.equal(asked, 0, 'an open document outside is not asked for either');
  const link = files.readEditFile(path.join(project, 'innocent.rs'), [project]);
  assert.equal(files.refusalNote(link), `${project}/innocent.rs → ${secret} is outside the project: the file was not opened (the diff alone is shown).`);
  // A root that is itself a link holds what its target holds.
  fs.symlinkSync(project, path.join(base, 'linked'));
  assert.equal(files.readEditFile(path.join(project, 'src/main.rs'), [path.join(base, 'linked')]).kind, 'file');
});

test('devices, a FIFO, a directory, a too large file: refused without blocking or reading', (t) => {
  const { project } = layout(t);
  const fifo = path.join(project, 'pipe.rs');
  execFileSync('mkfifo', [fifo]);
  fs.symlinkSync('/dev/zero', path.join(project, 'zero.rs'));
  fs.writeFileSync(path.join(project, 'big.rs'), Buffer.alloc(files.MAX_BYTES + 1, 'a'));
  const cases = [
    ['/dev/zero', ['/'], 'not-file'],
    ['/dev/tty', ['/dev'], 'not-file'],
    ['/dev/zero', [project], 'outside'],
    [path.join(project, 'zero.rs'), [project], 'outside'],
    [fifo, [project], 'not-file'],
    [path.join(project, 'src'), [project], 'not-file'],
    [path.join(project, 'big.rs'), [project], 'too-large'],
  ];
  for (const [named, roots, why] of cases) {
    const file = files.readEditFile(named, roots);
    assert.deepEqual([file.kind, file.why], ['refused', why], named);
  }
  assert.match(files.refusalNote(files.readEditFile(fifo, [project])), /pipe\.rs is not a regular file/);
});
