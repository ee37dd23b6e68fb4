// Unit tests of the extension's logic (no `vscode` needed).
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import test from 'node:test';

const require = createRequire(import.meta.url);
const logic = require('../out/logic.js');
const proto = require('../out/protocol.js');

const database = {
  question: 'Which database?', header: 'Database', multiple: false, custom: true,
  options: [{ label: 'Postgres', description: 'Relational' }, { label: 'SQLite', description: '' }],
};
const checks = { ...database, header: 'Checks', multiple: true, custom: false,
  options: [{ label: 'Unit', description: '' }, { label: 'Lint', description: '' }] };

test('items show descriptions and an Other… row when typing is allowed', () => {
  assert.deepEqual(logic.itemsFor(database), [
    { kind: 'option', label: 'Postgres', description: 'Relational' },
    { kind: 'option', label: 'SQLite', description: undefined },
    { kind: 'other', label: 'Other…', description: 'type an answer' },
  ]);
  assert.equal(logic.itemsFor(checks).length, 2);
});

test('titles name the question; VS Code counts the steps', () => {
  assert.equal(logic.stepTitle(database), 'Database');
  assert.equal(logic.stepTitle({ ...checks, header: '' }), 'Question');
});

test('picks become answers, typed text is trimmed, single-select takes one', () => {
  const [postgres, sqlite, other] = logic.itemsFor(database);
  assert.deepEqual(logic.answerFrom(database, [sqlite]), { answer: ['SQLite'] });
  assert.deepEqual(logic.answerFrom(database, [other], '  MariaDB '), { answer: ['MariaDB'] });
  assert.deepEqual(logic.answerFrom(database, [other], '   '), { error: 'Type an answer, or pick an option.' });
  assert.deepEqual(logic.answerFrom(database, [postgres, sqlite]), { error: 'Pick one option.' });
  assert.deepEqual(logic.answerFrom(database, []), { error: 'Pick one option.' });
  const [unit, lint] = logic.itemsFor(checks);
  assert.deepEqual(logic.answerFrom(checks, [unit, lint]), { answer: ['Unit', 'Lint'] });
  assert.deepEqual(logic.answerFrom(checks, []), { answer: [] });
});

test('settings become ask-lsp configuration', () => {
  assert.deepEqual(logic.toServerConfig({ servers: [], directory: '' }), { servers: [{ directory: undefined }], locale: '', codexHomes: [] });
  assert.deepEqual(
    logic.toServerConfig({ servers: [{ url: 'http://a:1' }, { url: 'http://b:2', directory: '/b' }], directory: '/p', policy: { mode: 'reject' } }),
    { servers: [{ url: 'http://a:1', directory: '/p' }, { url: 'http://b:2', directory: '/b' }], policy: { mode: 'reject' }, locale: '', codexHomes: [] },
  );
  assert.deepEqual(logic.toServerConfig({ surface: 'messageRequest' }), { servers: [{ directory: undefined }], surface: 'messageRequest', locale: '', codexHomes: [] });
  assert.deepEqual(logic.toServerConfig({ notify: { desktop: true } }), { servers: [{ directory: undefined }], notify: { desktop: true }, locale: '', codexHomes: [] });
  assert.deepEqual(logic.toServerConfig({ notify: null }), { servers: [{ directory: undefined }], locale: '', codexHomes: [] });
  assert.deepEqual(logic.toServerConfig({ codexHomes: ['/h/a'] }).codexHomes, ['/h/a']);
});

test('status bar text', () => {
  assert.equal(logic.statusText(0), '');
  assert.equal(logic.statusText(3), '$(question) 3');
});

const request = { key: 'default/que_1', server: 'default', requestID: 'que_1', sessionID: 'ses_1', timeoutMs: null, pending: 1,
  questions: [database, checks] };

test('the title: the server\'s (version 2), else the same rule computed', () => {
  assert.equal(proto.requestTitle({ ...request, title: 'From the server' }), 'From the server');
  assert.equal(proto.requestTitle(request), 'Database (+1 more)');
  assert.equal(proto.requestTitle({ ...request, questions: [{ ...checks, header: '' }] }), 'Which database?');
  const long = 'é'.repeat(100);
  assert.equal(proto.requestTitle({ ...request, questions: [{ ...checks, header: long }] }), 'é'.repeat(79) + '…');
});

test('resolved here: the server\'s `here` (version 2), else the reason', () => {
  assert.equal(proto.resolvedHere({ reason: 'answeredElsewhere', here: true }), true);
  assert.equal(proto.resolvedHere({ reason: 'answeredHere', here: false }), false);
  assert.equal(proto.resolvedHere({ reason: 'rejectedHere' }), true);
  assert.equal(proto.resolvedHere({ reason: 'timeout' }), false);
});

test('a prompt is announced first when the window is not focused or the last one was put off', () => {
  assert.equal(logic.presentation({ focused: true, laterChosen: false }), 'quickpick');
  assert.equal(logic.presentation({ focused: false, laterChosen: false }), 'notification');
  assert.equal(logic.presentation({ focused: true, laterChosen: true }), 'notification');
  assert.equal(logic.waitingMessage({ ...request, origin: { agent: 'build' } }),
    'ask-lsp: the agent is waiting for you: "Database (+1 more)" (default, agent build)');
  assert.equal(logic.waitingMessage(request), 'ask-lsp: the agent is waiting for you: "Database (+1 more)" (default)');
});

const dangerous = 'echo hello && ' + 'x'.repeat(120) + ' ; rm -rf ~/important';
const bash = {
  ...request, key: 'default/per_1', requestID: 'per_1', kind: 'permission', title: 'Run echo hello',
  source: { backend: 'opencode', url: 'http://sim', directory: '/sim/project' }, origin: { toolCallID: 'c', agent: 'build' },
  questions: undefined,
  permission: {
    action: 'bash', title: 'Run echo hello', patterns: ['echo hello', 'rm -rf ~/important'], command: dangerous, diff: null,
    choices: [
      { id: 'once', label: 'Allow once', effect: 'allowOnce' },
      { id: 'always', label: 'Allow always (echo *)', effect: 'allowAlways' },
      { id: 'reject', label: 'Reject', effect: 'rejectOnce' },
    ],
  },
};

test('wrapped rows keep every character and each fits the QuickPick', () => {
  const rows = logic.wrapRows(dangerous);
  assert.equal(rows.join(''), dangerous, 'nothing is dropped');
  assert.ok(rows.length > 3);
  assert.ok(rows.every((r) => [...r].length <= 44));
  assert.match(rows.at(-1), /rm -rf ~\/important$/, 'the end of the command is shown');
  assert.deepEqual(logic.wrapRows('a\nb'), ['a', 'b']);
  // Wide characters take two columns.
  assert.ok(logic.wrapRows('界'.repeat(30)).every((r) => [...r].length <= 22));
  assert.deepEqual(logic.wrapRows('界'.repeat(30)).join(''), '界'.repeat(30));
});

test('a permission: the whole command, patterns and session first, then the decisions', () => {
  const rows = logic.permissionRows(bash);
  const labels = rows.map((r) => r.label);
  const firstChoice = rows.findIndex((r) => r.kind === 'choice');
  assert.equal(rows[0].kind, 'separator', 'no decision is the first (default) row');
  assert.ok(rows.slice(0, firstChoice).every((r) => r.kind === 'info' || r.kind === 'separator'));
  const commandRows = rows.filter((r) => r.kind === 'info' && /^(\$ | {2})/.test(r.label)).map((r) => r.label.slice(2));
  assert.ok(commandRows.join('').startsWith(dangerous), 'the command, whole');
  assert.ok(labels.includes('• rm -rf ~/important'));
  assert.deepEqual(rows.find((r) => r.label === 'ses_1'), { kind: 'info', label: 'ses_1', description: 'default · /sim/project · agent build' });
  assert.deepEqual(rows.filter((r) => r.kind === 'choice').map((r) => [r.label, r.choice.id]),
    [['Allow once', 'once'], ['Allow always (echo *)', 'always'], ['Reject', 'reject']]);
  assert.ok(labels.includes('Reject with a reason…'));
  assert.ok(!rows.some((r) => r.kind === 'diff'), 'no diff row without a diff');
  assert.equal(logic.permissionTitle(bash), 'Permission: bash — Run echo hello');
  assert.equal(logic.permissionTitle({ ...bash, title: 'Run echo h' }), 'Permission: bash — Run echo h…');
  // A choice label too long for its row is also shown whole above it.
  const always = `Allow always (${'git status *, '.repeat(8)}rm *)`;
  const long = { ...bash, permission: { ...bash.permission, choices: [{ id: 'always', label: always, effect: 'allowAlways' }] } };
  const longRows = logic.permissionRows(long);
  const at = longRows.findIndex((r) => r.kind === 'choice');
  const above = longRows.slice(0, at).reverse();
  const shown = above.slice(0, above.findIndex((r) => r.kind === 'separator')).reverse().map((r) => r.label.replace(/^ {2}/, ''));
  assert.equal(shown.join(''), always);
  assert.equal(longRows[at].label, always);
  const edit = { ...bash, permission: { ...bash.permission, action: 'edit', command: null, patterns: ['src/a.ts'], diff: '--- a\n+++ b\n' } };
  const editRows = logic.permissionRows(edit);
  assert.ok(editRows.some((r) => r.kind === 'diff'));
  assert.ok(editRows.some((r) => r.label === 'Files and patterns'));
  assert.ok(editRows.some((r) => r.label === '• src/a.ts'));
  const document = logic.permissionDocument(edit);
  assert.match(document, /^Permission: edit\n/);
  assert.match(document, /Diff:\n--- a\n\+\+\+ b\n/);
  assert.match(logic.permissionDocument(bash), new RegExp(`Command:\n${dangerous.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\n`));
});

test('reject with a reason: the reason is trimmed and required', () => {
  assert.deepEqual(logic.rejectWithReason('  use git stash instead '), { outcome: 'rejected', message: 'use git stash instead' });
  assert.deepEqual(logic.rejectWithReason('  '), { error: 'Type a reason, or pick Reject.' });
  assert.deepEqual(logic.rejectWithReason(undefined), { error: 'Type a reason, or pick Reject.' });
});

const field = (type, extra = {}) => ({ id: type, title: type[0].toUpperCase() + type.slice(1), description: '', required: true, type, ...extra });

test('form fields: labels mark required ones, hints say what is taken', () => {
  assert.equal(logic.fieldLabel(field('text')), 'Text *');
  assert.equal(logic.fieldLabel(field('text', { required: false })), 'Text (optional)');
  assert.equal(logic.fieldHint(field('text', { minLength: 2, maxLength: 20, pattern: '^[a-z]+$' })), '2 to 20 characters, matching ^[a-z]+$');
  assert.equal(logic.fieldHint(field('text', { format: 'email' })), 'an email address');
  assert.equal(logic.fieldHint(field('integer', { minimum: 1024, maximum: 65535 })), 'a whole number, from 1024 to 65535');
  assert.equal(logic.fieldHint(field('number', { minimum: 0 })), 'a number, at least 0');
  assert.equal(logic.fieldHint(field('multi', { minItems: 1, maxItems: 2 })), 'pick 1 to 2');
  assert.equal(logic.fieldHint(field('boolean')), '');
});

test('typed fields are validated as ask-lsp does', () => {
  const name = field('text', { minLength: 2, maxLength: 5, pattern: '^[a-z][a-z0-9-]*$' });
  assert.deepEqual(logic.parseTyped(name, ' web '), { value: 'web' });
  assert.deepEqual(logic.parseTyped(name, 'a'), { error: 'At least 2 characters (1 now)' });
  assert.deepEqual(logic.parseTyped(name, 'abcdef'), { error: 'At most 5 characters (6 now)' });
  assert.deepEqual(logic.parseTyped(name, 'Web'), { error: 'Does not match ^[a-z][a-z0-9-]*$' });
  assert.deepEqual(logic.parseTyped(name, ''), { error: 'Text is required' });
  assert.deepEqual(logic.parseTyped({ ...name, required: false }, '  '), { value: undefined });
  const email = field('text', { format: 'email' });
  assert.deepEqual(logic.parseTyped(email, 'a@b'), { error: 'Not an email address' });
  assert.deepEqual(logic.parseTyped(email, 'a@b.example'), { value: 'a@b.example' });
  assert.ok('error' in logic.parseTyped(field('text', { format: 'date' }), '2025-02-30'));
  assert.deepEqual(logic.parseTyped(field('text', { format: 'date' }), '2024-02-29'), { value: '2024-02-29' });
  assert.deepEqual(logic.parseTyped(field('text', { format: 'date-time' }), '2024-02-29T10:00:00Z'), { value: '2024-02-29T10:00:00Z' });
  assert.ok('error' in logic.parseTyped(field('text', { format: 'date-time' }), '2024-02-29 10:00'));
  assert.deepEqual(logic.parseTyped(field('text', { format: 'uri' }), 'https://x.example/a'), { value: 'https://x.example/a' });
  assert.ok('error' in logic.parseTyped(field('text', { format: 'uri' }), 'not a uri'));
  // A pattern JavaScript cannot read is left to ask-lsp.
  assert.deepEqual(logic.parseTyped(field('text', { pattern: '(?<x' }), 'y'), { value: 'y' });
  const port = field('integer', { minimum: 1024, maximum: 65535 });
  assert.deepEqual(logic.parseTyped(port, '8080'), { value: 8080 });
  assert.deepEqual(logic.parseTyped(port, '80'), { error: 'At least 1024' });
  assert.deepEqual(logic.parseTyped(port, '70000'), { error: 'At most 65535' });
  assert.deepEqual(logic.parseTyped(port, '8080.5'), { error: 'Type a whole number' });
  assert.deepEqual(logic.parseTyped(port, '0x1F90'), { error: 'Type a number' });
  assert.deepEqual(logic.parseTyped(field('number', { maximum: 1 }), '0.25'), { value: 0.25 });
  assert.deepEqual(logic.parseTyped(field('number'), 'Infinity'), { error: 'Type a number' });
  assert.equal(logic.initialText(port, undefined), '');
  assert.equal(logic.initialText({ ...port, default: 3000 }, undefined), '3000');
  assert.equal(logic.initialText({ ...port, default: 3000 }, 8080), '8080');
});

test('pick fields: yes/no, choices, multi with bounds; optional ones can be left empty', () => {
  const logging = field('boolean', { default: true });
  assert.deepEqual(logic.fieldItems(logging), [
    { label: 'Yes', value: true, description: 'default', picked: true },
    { label: 'No', value: false, description: undefined, picked: false },
  ]);
  assert.deepEqual(logic.pickedValue(logging, [logic.fieldItems(logging)[1]]), { value: false });
  const size = field('choice', { required: false, options: [{ value: 'S', label: 'Small', description: 'Fits a laptop' }, { value: 'L', label: 'Large' }] });
  const sizeItems = logic.fieldItems(size, 'L');
  assert.deepEqual(sizeItems.map((i) => [i.label, i.value, i.picked]), [['Small', 'S', false], ['Large', 'L', true], ['Leave empty', undefined, false]]);
  // The agent's word on an option is shown beside it.
  assert.deepEqual(sizeItems.map((i) => i.description), ['Fits a laptop', undefined, 'optional: not answered']);
  assert.deepEqual(logic.pickedValue(size, [sizeItems[2]]), { value: undefined });
  assert.deepEqual(logic.pickedValue(size, []), { error: 'Pick one' });
  const colors = field('multi', { minItems: 1, maxItems: 2, default: ['#f00'],
    options: [{ value: '#f00', label: 'Red' }, { value: '#0f0', label: 'Green' }, { value: '#00f', label: 'Blue' }] });
  const colorItems = logic.fieldItems(colors);
  assert.deepEqual(colorItems.map((i) => [i.label, i.description, i.picked]), [['Red', 'default', true], ['Green', undefined, false], ['Blue', undefined, false]]);
  assert.deepEqual(logic.pickedValue(colors, []), { error: 'Pick at least 1' });
  assert.deepEqual(logic.pickedValue(colors, colorItems), { error: 'Pick at most 2' });
  assert.deepEqual(logic.pickedValue(colors, colorItems.slice(1)), { value: ['#0f0', '#00f'] });
  assert.deepEqual(logic.pickedValue({ ...colors, required: false, minItems: undefined }, []), { value: undefined });
  // The review shows labels, not the values sent.
  assert.deepEqual([logic.shownValue(colors, ['#f00', '#00f']), logic.shownValue(colors, []), logic.shownValue(logging, false),
    logic.shownValue(size, 'L'), logic.shownValue(size, undefined)], ['Red, Blue', '(none)', 'No', 'Large', '(empty)']);
});

test('a form\'s answer: values by field id, fields left empty left out; a link is consented with {}', () => {
  const form = { message: 'Configure', url: null, fields: [field('text'), field('integer'), field('boolean', { required: false })] };
  assert.deepEqual(logic.formAnswer(form, ['web', 8080, undefined]), { outcome: 'answered', values: { text: 'web', integer: 8080 } });
  assert.deepEqual(logic.LINK_CONSENT, { outcome: 'answered', values: {} });
});

test('an edit: its file, and the file with the diff applied, or why it does not apply', () => {
  const edit = (patterns, diff, directory) => ({ ...bash, source: { backend: 'opencode', url: 'u', directory },
    permission: { ...bash.permission, action: 'edit', patterns, diff } });
  const diff = '--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1,3 +1,4 @@\n one\n-two\n+TWO\n+two and a half\n three\n';
  assert.equal(logic.editTarget(edit(['src/a.ts', '/p/src/a.ts'], diff, '/p')), '/p/src/a.ts');
  assert.equal(logic.editTarget(edit(['src/a.ts'], diff, '/p/')), '/p/src/a.ts');
  assert.equal(logic.editTarget(edit(['src/a.ts'], diff, null)), undefined);
  assert.deepEqual(logic.applyDiff('one\ntwo\nthree\nfour\n', diff), { text: 'one\nTWO\ntwo and a half\nthree\nfour\n' });
  assert.deepEqual(logic.applyDiff('one\r\ntwo\r\nthree\r\n', diff), { text: 'one\r\nTWO\r\ntwo and a half\r\nthree\r\n' });
  // Changed since the agent read it: refused, never guessed.
  assert.deepEqual(logic.applyDiff('one\n2\nthree\n', diff), { error: 'line 2 is not what the diff expects' });
  // A new file; an empty context line whose space was trimmed.
  assert.deepEqual(logic.applyDiff('', '--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n'), { text: 'hello\nworld\n' });
  assert.deepEqual(logic.applyDiff('a\n\nb\n', '@@ -1,3 +1,3 @@\n a\n\n-b\n+c\n'), { text: 'a\n\nc\n' });
  assert.deepEqual(logic.applyDiff('a\n', 'not a diff'), { error: 'the diff is not a unified diff' });
});

test('the client declares the kinds it shows', () => {
  assert.deepEqual(proto.CAPABILITY, { version: 2, kinds: ['permission', 'form', 'secret'] });
  assert.equal(proto.requestTitle({ ...bash, title: undefined }), 'default/per_1');
});

test('the hook settings carry the binary\'s full path (shell-quoted when needed), as JSON for Claude Code and TOML for Codex', () => {
  const claude = logic.hookSnippet('claude', '/home/me/.vscode/extensions/ask-lsp-0.1.0-linux-x64/bin/ask-lsp');
  assert.equal(claude.file, '~/.claude/settings.json');
  assert.equal(JSON.parse(claude.text).hooks.PermissionRequest[0].hooks[0].command,
    '/home/me/.vscode/extensions/ask-lsp-0.1.0-linux-x64/bin/ask-lsp hook claude');
  const spaced = logic.hookSnippet('claude', "/Users/o'neil/VS Code/bin/ask-lsp");
  assert.equal(JSON.parse(spaced.text).hooks.PermissionRequest[0].hooks[0].command, "'/Users/o'\\''neil/VS Code/bin/ask-lsp' hook claude");
  const codex = logic.hookSnippet('codex', '/opt/ask-lsp');
  assert.equal(codex.file, '~/.codex/config.toml');
  assert.match(codex.text, /\ncommand = "\/opt\/ask-lsp hook codex"\ntimeout = 60\n$/);
  // Qwen Code and Copilot CLI in the README's shapes.
  const qwen = logic.hookSnippet('qwen', '/opt/ask-lsp');
  assert.equal(qwen.file, '~/.qwen/settings.json');
  assert.equal(JSON.parse(qwen.text).hooks.PermissionRequest[0].hooks[0].command, '/opt/ask-lsp hook qwen');
  const copilot = logic.hookSnippet('copilot', '/opt/ask-lsp');
  assert.equal(copilot.file, '~/.copilot/hooks/ask-lsp.json');
  assert.deepEqual(JSON.parse(copilot.text), { version: 1, hooks: { permissionRequest: [{ type: 'command', bash: '/opt/ask-lsp hook copilot', timeoutSec: 60 }] } });
});

test('a secret is typed masked and goes exactly as typed; the capability says so', () => {
  const token = { question: 'Which API token?', header: 'Token', options: [], multiple: false, custom: true, secret: true };
  const [other] = logic.itemsFor(token);
  assert.deepEqual(logic.answerFrom(token, [other], ' s3cr3t '), { answer: [' s3cr3t '] });
  assert.ok(proto.CAPABILITY.kinds.includes('secret'));
});
