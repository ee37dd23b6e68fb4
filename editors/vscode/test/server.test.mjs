// The protocol the extension relies on, against the real ask-lsp binary and
// the simulated OpenCode server, with the same JSON-RPC library
// vscode-languageclient uses: requests, answers, and cancellation tokens
// firing when a question is answered elsewhere.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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

async function sidecar(onAsk, settings = { servers: [{ url: sim }] }, editorLocale = undefined) {
  const child = spawn(BIN, [], { stdio: ['pipe', 'pipe', 'ignore'] });
  children.push(child);
  const connection = createProtocolConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  const resolved = [];
  const statuses = [];
  connection.onRequest(proto.ask, onAsk);
  connection.onNotification(proto.resolved, (p) => resolved.push(p));
  connection.onNotification(proto.status, (p) => statuses.push(p));
  connection.onNotification('window/showMessage', () => {});
  connection.onNotification('window/logMessage', () => {});
  connection.listen();
  await connection.sendRequest('initialize', {
    processId: process.pid, rootUri: null, locale: editorLocale,
    capabilities: { experimental: { askQuestions: proto.CAPABILITY } },
    initializationOptions: logic.toServerConfig(settings),
  });
  connection.sendNotification('initialized', {});
  return { connection, resolved, statuses };
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
  // Session ids are unique per server only: their policies live under it.
  policy: { mode: 'forward', timeoutMs: 60000, servers: { oc: { mode: 'forward', sessions: { ses_x: { mode: 'forward' } } } },
    agents: { plan: { mode: 'forward' } } },
  locale: 'zh-CN',
};

test('every setting in package.json is a key ask-lsp accepts', async () => {
  const properties = manifest.contributes.configuration.properties;
  const serverKeys = Object.keys(properties['askLsp.servers'].items.properties).sort();
  assert.deepEqual(serverKeys, [...new Set([...Object.keys(samples.opencode), ...Object.keys(samples.sandbox)])].sort(),
    'every server key has a sample here');
  const policyKeys = Object.keys(properties['askLsp.policy'].properties).filter((k) => k !== 'rules').sort();
  assert.deepEqual(policyKeys, Object.keys(samples.policy).sort(), 'every policy key has a sample here');
  assert.deepEqual(properties['askLsp.surface'].enum, ['auto', 'extension', 'messageRequest', 'none']);
  assert.deepEqual(properties['askLsp.locale'].enum, ['', 'en', 'zh-CN']);
  const settings = { servers: [samples.opencode, samples.sandbox], surface: samples.surface, policy: samples.policy, locale: samples.locale };
  assert.equal(logic.toServerConfig(settings).locale, 'zh-CN', 'the locale is sent');
  const { connection } = await sidecar(() => ({ outcome: 'deferred' }), settings);
  connection.dispose();
  for (const surface of properties['askLsp.surface'].enum) {
    const { connection: c } = await sidecar(() => ({ outcome: 'deferred' }), { surface });
    c.dispose();
  }
  for (const locale of properties['askLsp.locale'].enum) {
    const { connection: c } = await sidecar(() => ({ outcome: 'deferred' }), { locale });
    c.dispose();
  }
  const auto = { servers: [{ url: sim }], policy: { mode: 'auto', rules: [{ match: 'x', answers: ['y'] }] } };
  (await sidecar(() => ({ outcome: 'deferred' }), auto)).connection.dispose();
  // The check can fail: a key ask-lsp does not know is refused.
  await assert.rejects(sidecar(() => ({ outcome: 'deferred' }), { servers: [{ url: sim, colour: 'red' }] }), /unknown field `colour`/);
});

test('askLsp.codexHomes reaches ask-lsp: each home is followed as a server of its own; a relative one is refused by name', async () => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ask-lsp-codex-home-'));
  try {
    assert.deepEqual(manifest.contributes.configuration.properties['askLsp.codexHomes'].default, []);
    const { connection, statuses } = await sidecar(() => ({ outcome: 'deferred' }), { servers: [{ url: sim }], codexHomes: [home] });
    const socket = `unix:${home}/app-server-control/app-server-control.sock`;
    await waitFor(() => statuses.some((s) => (s.servers ?? []).some((server) => server.url === socket)), `a status naming ${socket}`);
    connection.dispose();
    await assert.rejects(sidecar(() => ({ outcome: 'deferred' }), { servers: [{ url: sim }], codexHomes: ['codex'] }),
      /codexHomes\[0\] "codex": not an absolute path/);
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
});

test('askLsp.locale reaches ask-lsp: the title and choices it computes are in that language', async () => {
  const rm = { permission: 'bash', patterns: ['rm -rf build'], metadata: { command: 'rm -rf build' }, always: ['rm *'] };
  const words = {
    'zh-CN': { title: '运行 rm -rf build', choices: ['仅此一次允许', '始终允许（rm *）', '拒绝'] },
    en: { title: 'Run rm -rf build', choices: ['Allow once', 'Allow always (rm *)', 'Reject'] },
  };
  for (const [locale, expected] of Object.entries(words)) {
    let seen;
    const { connection } = await sidecar((params) => {
      seen = params;
      return { outcome: 'answered', choice: 'reject' };
    }, { servers: [{ url: sim }], locale });
    try {
      const start = (await http('GET', '/_sim/log')).length;
      const permission = await http('POST', '/_sim/permission', rm);
      assert.deepEqual(await logAfter(start, 'the reject'), [{ kind: 'permission', id: permission.id, reply: 'reject', message: null }]);
      assert.equal(seen.title, expected.title, locale);
      assert.deepEqual(seen.permission.choices.map((c) => c.label), expected.choices, locale);
    } finally {
      connection.dispose();
    }
  }
});

test('askLsp.locale set back to "" while VS Code runs: ask-lsp follows the editor\'s language again', async () => {
  const rm = { permission: 'bash', patterns: ['rm -rf build'], metadata: { command: 'rm -rf build' }, always: ['rm *'] };
  const titles = [];
  const { connection } = await sidecar((params) => {
    titles.push(params.title);
    return { outcome: 'answered', choice: 'reject' };
  }, { servers: [{ url: sim }], locale: 'en' }, 'zh-cn');
  try {
    for (const [locale, title] of [['en', 'Run rm -rf build'], ['', '运行 rm -rf build']]) {
      connection.sendNotification('workspace/didChangeConfiguration', { settings: logic.toServerConfig({ servers: [{ url: sim }], locale }) });
      // The update is taken in beside the event stream, not before it: a
      // prompt asked at once may still come in the language before (seen
      // on a loaded machine). Asked again until the title is in the new one.
      await waitFor(async () => {
        const start = (await http('GET', '/_sim/log')).length;
        const permission = await http('POST', '/_sim/permission', rm);
        assert.deepEqual(await logAfter(start, 'the reject'), [{ kind: 'permission', id: permission.id, reply: 'reject', message: null }]);
        return titles.at(-1) === title;
      }, `a title in ${locale || "the editor's language"}`);
    }
    assert.equal(titles[0], 'Run rm -rf build');
  } finally {
    connection.dispose();
  }
});

async function logAfter(count, what) {
  await waitFor(async () => (await http('GET', '/_sim/log')).length > count, what);
  return (await http('GET', '/_sim/log')).slice(count);
}

const dangerous = `git status && ${'echo padding; '.repeat(40)}rm -rf ~/important`;

test('a permission arrives whole; Allow once reaches the server as `once`, a reason as a reject message', async () => {
  let seen;
  let answer = { outcome: 'answered', choice: 'once' };
  const { connection } = await sidecar((params) => {
    seen = params;
    return answer;
  });
  const start = (await http('GET', '/_sim/log')).length;
  const permission = await http('POST', '/_sim/permission', {
    permission: 'bash', patterns: ['git status', 'rm -rf ~/important'], metadata: { command: dangerous }, always: ['git status *'],
  });
  assert.deepEqual(await logAfter(start, 'the reply'), [{ kind: 'permission', id: permission.id, reply: 'once', message: null }]);
  assert.equal(seen.kind, 'permission');
  assert.equal(seen.sessionID, permission.sessionID);
  assert.equal(seen.permission.command, dangerous, 'the whole command');
  assert.deepEqual(seen.permission.choices.map((c) => [c.id, c.effect]), [['once', 'allowOnce'], ['always', 'allowAlways'], ['reject', 'rejectOnce']]);
  // What the QuickPick shows, from what ask-lsp sent: the end of the command too.
  const rows = logic.permissionRows(seen);
  assert.match(rows.filter((r) => r.kind === 'info').map((r) => r.label).join('\n'), /rm -rf ~\/important$/m);

  answer = logic.rejectWithReason(' use git stash ');
  const second = await http('POST', '/_sim/permission', { permission: 'bash', patterns: ['rm -rf build'], metadata: { command: 'rm -rf build' }, always: ['rm *'] });
  assert.deepEqual(await logAfter(start + 1, 'the reject'), [{ kind: 'permission', id: second.id, reply: 'reject', message: 'use git stash' }]);
  connection.dispose();
});

test('a permission answered elsewhere cancels the request token; nothing is sent from here', async () => {
  let cancelled = false;
  const { connection, resolved } = await sidecar((params, token) => new Promise((resolve) => {
    token.onCancellationRequested(() => {
      cancelled = true;
      resolve({ outcome: 'answered', choice: 'once' }); // ignored: the request was cancelled
    });
  }));
  const start = (await http('GET', '/_sim/log')).length;
  const permission = await http('POST', '/_sim/permission', { permission: 'bash', patterns: ['ls'], metadata: { command: 'ls' }, always: ['ls *'] });
  await new Promise((r) => setTimeout(r, 300));
  // Another client rejects it (its reply lands in the log too).
  await http('POST', `/permission/${permission.id}/reply?directory=/sim/project`, { reply: 'reject', message: 'not now' });
  await waitFor(() => cancelled && resolved.some((r) => r.key === `default/${permission.id}`), 'the cancellation');
  assert.equal(resolved.find((r) => r.key === `default/${permission.id}`).reason, 'rejectedElsewhere');
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual((await http('GET', '/_sim/log')).slice(start), [{ kind: 'permission', id: permission.id, reply: 'reject', message: 'not now' }]);
  connection.dispose();
});

/** A sandbox-agent server on the sim: each test its own ACP stream. */
const acp = (serverId) => ({ servers: [{ name: 'acp', url: sim, backend: 'sandbox-agent', serverId }] });
const schema = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Project name', minLength: 2, maxLength: 20, pattern: '^[a-z][a-z0-9-]*$' },
    port: { type: 'integer', title: 'Port', minimum: 1024, maximum: 65535, default: 3000 },
    logging: { type: 'boolean', title: 'Enable logging', default: true },
    strategy: { type: 'string', title: 'Strategy', oneOf: [{ const: 'conservative', title: 'Conservative' }, { const: 'balanced', title: 'Balanced' }] },
    colors: { type: 'array', title: 'Colors', minItems: 1, maxItems: 2,
      items: { anyOf: [{ const: '#f00', title: 'Red' }, { const: '#0f0', title: 'Green' }, { const: '#00f', title: 'Blue' }] } },
    note: { type: 'string', title: 'Note' },
  },
  required: ['name', 'port', 'strategy', 'colors'],
};
let elicitations = 0;
async function elicit(serverId, params) {
  const id = `e-${++elicitations}`;
  await http('POST', `/_sim/acp/${serverId}`, { jsonrpc: '2.0', id, method: 'elicitation/create', params });
  return id;
}
const formParams = { sessionId: 'sim-session', mode: 'form', message: 'Configure the new project', requestedSchema: schema };

test('a form (ACP elicitation) arrives with its fields; the values built step by step reach the agent', async () => {
  let seen;
  let answer;
  const { connection } = await sidecar((params) => {
    seen = params;
    const fields = params.form.fields;
    const byId = (id) => fields.find((f) => f.id === id);
    const typed = (id, text) => logic.parseTyped(byId(id), text).value;
    const picked = (id, labels) => logic.pickedValue(byId(id),
      logic.fieldItems(byId(id)).filter((i) => labels.includes(i.label))).value;
    const values = fields.map((f) => ({
      name: typed('name', ' web-app '), port: typed('port', '8080'), logging: picked('logging', ['No']),
      strategy: picked('strategy', ['Balanced']), colors: picked('colors', ['Red', 'Blue']), note: typed('note', ''),
    })[f.id]);
    return answer ?? logic.formAnswer(params.form, values);
  }, acp('steps'));
  const start = (await http('GET', '/_sim/log')).length;
  const id = await elicit('steps', formParams);
  const [received] = await logAfter(start, 'the form answer');
  assert.deepEqual(received, { kind: 'acp', message: { jsonrpc: '2.0', id,
    result: { action: 'accept', content: { name: 'web-app', port: 8080, logging: false, strategy: 'balanced', colors: ['#f00', '#00f'] } } } });
  assert.equal(seen.kind, 'form');
  assert.equal(seen.form.message, 'Configure the new project');
  assert.deepEqual(seen.form.fields.map((f) => [f.id, f.type, f.required]), [
    ['name', 'text', true], ['port', 'integer', true], ['logging', 'boolean', false], ['strategy', 'choice', true],
    ['colors', 'multi', true], ['note', 'text', false]]);
  const name = seen.form.fields[0];
  assert.deepEqual([name.minLength, name.maxLength, name.pattern], [2, 20, '^[a-z][a-z0-9-]*$']);
  assert.equal(logic.parseTyped(name, 'Web').error, 'Does not match ^[a-z][a-z0-9-]*$', 'the shape the InputBox validates');

  answer = { outcome: 'rejected' };
  const declined = await elicit('steps', formParams);
  assert.deepEqual(await logAfter(start + 1, 'the decline'), [{ kind: 'acp', message: { jsonrpc: '2.0', id: declined, result: { action: 'decline' } } }]);
  connection.dispose();
});

test('a form cancelled by the agent cancels the request token; a link is consented with {} (never opened by ask-lsp)', async () => {
  let shown = false;
  let cancelled = false;
  let link;
  const { connection } = await sidecar((params, token) => {
    if (params.form.url) {
      link = params.form.url;
      return logic.LINK_CONSENT;
    }
    shown = true;
    return new Promise((resolve) => token.onCancellationRequested(() => {
      cancelled = true;
      resolve({ outcome: 'deferred' });
    }));
  }, acp('cancel'));
  const start = (await http('GET', '/_sim/log')).length;
  const id = await elicit('cancel', formParams);
  // Cancelled before it is shown (while ask-lsp still reads the server's
  // history), it would never reach the editor: wait until it has.
  await waitFor(() => shown, 'the form shown');
  await http('POST', '/_sim/acp/cancel', { jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: id } });
  await waitFor(() => cancelled, 'the cancellation');
  const url = 'https://github.com@login.example.com/oauth/authorize?state=xyz';
  const linkId = await elicit('cancel', { sessionId: 'sim-session', mode: 'url', elicitationId: 'oauth-1', url, message: 'Authorize access.' });
  assert.deepEqual(await logAfter(start, 'the consent'), [{ kind: 'acp', message: { jsonrpc: '2.0', id: linkId, result: { action: 'accept' } } }]);
  assert.deepEqual(link, {
    url, domain: 'login.example.com',
    warning: 'Check the host: the link shows "github.com@login.example.com" where its host goes, but a browser opens login.example.com.',
  });
  connection.dispose();
});
