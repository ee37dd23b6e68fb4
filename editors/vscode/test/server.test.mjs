// The protocol the extension relies on, against the real ask-lsp binary and
// the simulated OpenCode server, with the same JSON-RPC library
// vscode-languageclient uses: requests, answers, and cancellation tokens
// firing when a question is answered elsewhere.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import {
  StreamMessageReader,
  StreamMessageWriter,
  createProtocolConnection,
} from 'vscode-languageserver-protocol/node.js';

const require = createRequire(import.meta.url);
const logic = require('../out/logic.js');
const proto = require('../out/protocol.js');
const manifest = require('../package.json');
const BIN = process.env.ASK_LSP_BIN;
assert.ok(BIN, 'ASK_LSP_BIN must point at the ask-lsp binary');

const children = [];
let sim;

function startSim() {
  return new Promise((resolve, reject) => {
    const child = spawn(process.env.ASK_SIM_BIN, ['serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (line) => {
      const match = /listening on (\S+)/.exec(line);
      if (match) resolve(match[1]);
    });
    child.on('exit', (code) => reject(new Error(`sim exited ${code}`)));
  });
}

async function http(method, path, body) {
  const response = await fetch(sim + path, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body && JSON.stringify(body),
  });
  return response.json();
}

async function waitFor(condition, what) {
  const deadline = Date.now() + 8000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function sidecar(onAsk, settings = { servers: [{ url: sim }] }) {
  const child = spawn(BIN, [], { stdio: ['pipe', 'pipe', 'ignore'] });
  children.push(child);
  const connection = createProtocolConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  const resolved = [];
  connection.onRequest(proto.ask, onAsk);
  connection.onNotification(proto.resolved, (p) => resolved.push(p));
  connection.onNotification(proto.status, () => {});
  connection.onNotification('window/showMessage', () => {});
  connection.onNotification('window/logMessage', () => {});
  connection.listen();
  await connection.sendRequest('initialize', {
    processId: process.pid, rootUri: null,
    capabilities: { experimental: { askQuestions: { version: proto.VERSION } } },
    initializationOptions: logic.toServerConfig(settings),
  });
  connection.sendNotification('initialized', {});
  return { connection, resolved };
}

before(async () => {
  sim = await startSim();
});

after(() => {
  for (const child of children) child.kill();
});

const database = [{ question: 'Which database?', header: 'Database',
  options: [{ label: 'Postgres', description: 'Relational' }, { label: 'SQLite', description: 'Embedded' }] }];

test('a question arrives with everything the QuickPick needs; the picked answer reaches the server', async () => {
  let seen;
  const { connection } = await sidecar((params) => {
    seen = params;
    const q = params.questions[0];
    const items = logic.itemsFor(q);
    return { outcome: 'answered', answers: [logic.answerFrom(q, [items[1]]).answer] };
  });
  const request = await http('POST', '/_sim/ask', { questions: database });
  await waitFor(async () => (await http('GET', '/_sim/log')).length === 1, 'the reply');
  assert.deepEqual(await http('GET', '/_sim/log'), [{ kind: 'reply', id: request.id, answers: [['SQLite']] }]);
  assert.equal(seen.key, `default/${request.id}`);
  assert.deepEqual(seen.questions, [{ ...database[0], multiple: false, custom: true }]);
  assert.equal(proto.requestTitle(seen), 'Database');
  connection.dispose();
});

test('answered elsewhere cancels the request token (which closes the QuickPick)', async () => {
  let cancelled = false;
  const { connection, resolved } = await sidecar((params, token) => new Promise((resolve) => {
    token.onCancellationRequested(() => {
      cancelled = true;
      resolve({ outcome: 'deferred' });
    });
  }));
  const before = (await http('GET', '/_sim/log')).length;
  const request = await http('POST', '/_sim/ask', { questions: database });
  await waitFor(() => resolved.length === 0 && http('GET', '/question').then((l) => l.length === 1), 'the question');
  await new Promise((r) => setTimeout(r, 200));
  await http('POST', `/_sim/answer/${request.id}`, { answers: [['Postgres']] });
  await waitFor(() => cancelled && resolved.length === 1, 'the cancellation');
  assert.equal(resolved[0].reason, 'answeredElsewhere');
  assert.equal(proto.resolvedHere(resolved[0]), false);
  assert.equal((await http('GET', '/_sim/log')).length, before);
  connection.dispose();
});

// Every key the settings schema offers is one ask-lsp accepts: ask-lsp
// refuses unknown configuration keys, so `initialize` would fail otherwise.
const samples = {
  opencode: { name: 'oc', url: 'http://127.0.0.1:9', directory: '/tmp', username: 'u', password: 'p' },
  sandbox: { name: 'sa', url: 'http://127.0.0.1:9', backend: 'sandbox-agent', serverId: 'claude', token: 't' },
  surface: 'auto',
  policy: { mode: 'forward', timeoutMs: 60000, servers: { oc: { mode: 'forward' } }, agents: { plan: { mode: 'forward' } },
    sessions: { ses_x: { mode: 'forward' } } },
};

test('every setting in package.json is a key ask-lsp accepts', async () => {
  const properties = manifest.contributes.configuration.properties;
  const serverKeys = Object.keys(properties['askLsp.servers'].items.properties).sort();
  assert.deepEqual(serverKeys, [...new Set([...Object.keys(samples.opencode), ...Object.keys(samples.sandbox)])].sort(),
    'every server key has a sample here');
  const policyKeys = Object.keys(properties['askLsp.policy'].properties).filter((k) => k !== 'rules').sort();
  assert.deepEqual(policyKeys, Object.keys(samples.policy).sort(), 'every policy key has a sample here');
  assert.deepEqual(properties['askLsp.surface'].enum, ['auto', 'extension', 'messageRequest', 'none']);
  const settings = { servers: [samples.opencode, samples.sandbox], surface: samples.surface, policy: samples.policy };
  const { connection } = await sidecar(() => ({ outcome: 'deferred' }), settings);
  connection.dispose();
  for (const surface of properties['askLsp.surface'].enum) {
    const { connection: c } = await sidecar(() => ({ outcome: 'deferred' }), { surface });
    c.dispose();
  }
  const auto = { servers: [{ url: sim }], policy: { mode: 'auto', rules: [{ match: 'x', answers: ['y'] }] } };
  (await sidecar(() => ({ outcome: 'deferred' }), auto)).connection.dispose();
  // The check can fail: a key ask-lsp does not know is refused.
  await assert.rejects(sidecar(() => ({ outcome: 'deferred' }), { servers: [{ url: sim, colour: 'red' }] }), /unknown field `colour`/);
});
