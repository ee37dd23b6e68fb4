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
  assert.deepEqual(logic.toServerConfig({ servers: [], directory: '' }), { servers: [{ directory: undefined }] });
  assert.deepEqual(
    logic.toServerConfig({ servers: [{ url: 'http://a:1' }, { url: 'http://b:2', directory: '/b' }], directory: '/p', policy: { mode: 'reject' } }),
    { servers: [{ url: 'http://a:1', directory: '/p' }, { url: 'http://b:2', directory: '/b' }], policy: { mode: 'reject' } },
  );
  assert.deepEqual(logic.toServerConfig({ surface: 'messageRequest' }), { servers: [{ directory: undefined }], surface: 'messageRequest' });
  assert.deepEqual(logic.toServerConfig({ notify: { desktop: true } }), { servers: [{ directory: undefined }], notify: { desktop: true } });
  assert.deepEqual(logic.toServerConfig({ notify: null }), { servers: [{ directory: undefined }] });
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
