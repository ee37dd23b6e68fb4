// One true end-to-end test in a real VS Code (code-server) driven through
// Chromium: a question from the simulated OpenCode server appears as a
// QuickPick, the test picks an option, and the server receives it.
// Needs CODE_SERVER_DIR, CODE_SERVER_NODE, ASK_LSP_VSIX (scripts/test.sh sets them).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { chromium } from 'playwright-core';

const { ASK_LSP_BIN, CODE_SERVER_DIR, CODE_SERVER_NODE, ASK_LSP_VSIX } = process.env;
const ARTIFACTS = path.resolve(import.meta.dirname, '..', 'test-artifacts');
const children = [];
let browser;

after(async () => {
  await browser?.close();
  // Each child leads its own process group (code-server forks workers and
  // the extension host, which starts ask-lsp): kill whole groups.
  for (const child of children) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {}
  }
});

function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function run(cmd, args, opts = {}) {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true, ...opts });
  children.push(child);
  return child;
}

async function waitFor(condition, what, ms = 60000) {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      if (await condition()) return;
    } catch {}
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('a question shows as a QuickPick in VS Code and the pick reaches the server', { timeout: 240000 }, async (t) => {
  if (!CODE_SERVER_DIR || !CODE_SERVER_NODE || !ASK_LSP_VSIX) {
    if (process.env.ASK_LSP_REQUIRE_E2E) assert.fail('CODE_SERVER_DIR, CODE_SERVER_NODE and ASK_LSP_VSIX are required');
    t.skip('code-server not installed (scripts/install-e2e.sh)');
    return;
  }
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ask-lsp-vscode-'));
  const userData = path.join(home, 'user-data');
  const extensions = path.join(home, 'extensions');
  const workspace = path.join(home, 'workspace');
  fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
  fs.mkdirSync(workspace);

  const sim = run(process.env.ASK_SIM_BIN, ['serve', '--port', '0']);
  const simUrl = await new Promise((resolve) => {
    sim.stdout.setEncoding('utf8');
    sim.stdout.on('data', (line) => {
      const match = /listening on (\S+)/.exec(line);
      if (match) resolve(match[1]);
    });
  });
  fs.writeFileSync(path.join(userData, 'User', 'settings.json'), JSON.stringify({
    'askLsp.servers': [{ url: simUrl }],
    'workbench.startupEditor': 'none',
    'security.workspace.trust.enabled': false,
    'telemetry.telemetryLevel': 'off',
    'extensions.autoCheckUpdates': false,
    'update.mode': 'none',
  }));

  const entry = path.join(CODE_SERVER_DIR, 'out', 'node', 'entry.js');
  const env = { ...process.env, HOME: home };
  const install = run(CODE_SERVER_NODE, [entry, '--user-data-dir', userData, '--extensions-dir', extensions, '--install-extension', ASK_LSP_VSIX], { env });
  const installed = await new Promise((resolve) => install.on('exit', resolve));
  assert.equal(installed, 0, 'the .vsix installs');

  const port = await freePort();
  run(CODE_SERVER_NODE, [entry, '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--user-data-dir', userData,
    '--extensions-dir', extensions, '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', workspace], { env });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(async () => (await fetch(`${url}/healthz`)).ok, 'code-server');

  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(`${url}/?folder=${encodeURIComponent(workspace)}`);
  await page.waitForSelector('.monaco-workbench', { timeout: 60000 });

  const asked = await (await fetch(`${simUrl}/_sim/ask`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ questions: [{ question: 'Which database should the service use?', header: 'Database',
      options: [{ label: 'Postgres', description: 'Relational, the default' }, { label: 'SQLite', description: 'Embedded' }] }] }),
  })).json();

  const widget = page.locator('.quick-input-widget');
  await widget.waitFor({ state: 'visible', timeout: 90000 });
  const row = widget.locator('.monaco-list-row', { hasText: 'SQLite' });
  await row.waitFor({ state: 'visible', timeout: 30000 });
  assert.match(await widget.innerText(), /Database/);
  assert.match(await widget.innerText(), /Relational, the default/);
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, 'quickpick.png') });

  await row.click();
  await waitFor(async () => (await (await fetch(`${simUrl}/_sim/log`)).json()).length > 0, 'the reply', 30000);
  assert.deepEqual(await (await fetch(`${simUrl}/_sim/log`)).json(), [{ kind: 'reply', id: asked.id, answers: [['SQLite']] }]);
  await widget.waitFor({ state: 'hidden', timeout: 10000 });

  // Answered elsewhere while the QuickPick is open: it closes, and VS Code says so.
  const second = await (await fetch(`${simUrl}/_sim/ask`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ questions: [{ question: 'Run the migration now?', header: 'Migration',
      options: [{ label: 'Yes', description: '' }, { label: 'No', description: '' }] }] }),
  })).json();
  await widget.locator('.monaco-list-row', { hasText: 'No' }).waitFor({ state: 'visible', timeout: 30000 });
  await fetch(`${simUrl}/_sim/answer/${second.id}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ answers: [['Yes']] }),
  });
  await widget.waitFor({ state: 'hidden', timeout: 10000 });
  await page.getByText('"Migration" was answered elsewhere').first().waitFor({ timeout: 10000 });
  await page.screenshot({ path: path.join(ARTIFACTS, 'dismissed.png') });
  assert.equal((await (await fetch(`${simUrl}/_sim/log`)).json()).length, 1, 'nothing more was sent');

  // Two questions in sequence: a multi-select, then a typed answer via Other….
  const third = await (await fetch(`${simUrl}/_sim/ask`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ questions: [
      { question: 'Which checks should run?', header: 'Checks', multiple: true,
        options: [{ label: 'Unit', description: '' }, { label: 'Lint', description: '' }, { label: 'E2E', description: '' }] },
      { question: 'What should the release be called?', header: 'Release',
        options: [{ label: 'v1', description: 'the obvious one' }] },
    ] }),
  })).json();
  await widget.locator('.monaco-list-row', { hasText: 'E2E' }).waitFor({ state: 'visible', timeout: 30000 });
  assert.match(await widget.innerText(), /^Checks \(1\/2\)$/m);
  await widget.locator('.monaco-list-row', { hasText: 'Unit' }).click();
  await widget.locator('.monaco-list-row', { hasText: 'E2E' }).click();
  await page.screenshot({ path: path.join(ARTIFACTS, 'multiselect.png') });
  await page.keyboard.press('Enter');
  // The first question also has an Other… row: wait for the second step's title.
  await waitFor(async () => /^Release \(2\/2\)$/m.test(await widget.innerText()), 'the second question', 10000);
  await widget.locator('.monaco-list-row', { hasText: 'Other…' }).click();
  await page.waitForFunction(() => !document.querySelector('.quick-input-widget .monaco-list-row'), null, { timeout: 10000 });
  await page.keyboard.type('v2 beta');
  await page.keyboard.press('Enter');
  await waitFor(async () => (await (await fetch(`${simUrl}/_sim/log`)).json()).length === 2, 'the second reply', 30000);
  assert.deepEqual((await (await fetch(`${simUrl}/_sim/log`)).json())[1],
    { kind: 'reply', id: third.id, answers: [['Unit', 'E2E'], ['v2 beta']] });

  // Later keeps a question pending; the next one is announced by a
  // notification (Answer / Later) instead of a QuickPick jumping up.
  const ask = async (questions) => (await fetch(`${simUrl}/_sim/ask`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ questions }),
  })).json();
  await ask([{ question: 'Deploy now?', header: 'Deploy', options: [{ label: 'Yes', description: '' }, { label: 'No', description: '' }] }]);
  await widget.locator('.monaco-list-row', { hasText: 'Yes' }).waitFor({ state: 'visible', timeout: 30000 });
  await widget.getByRole('button', { name: /^Later/ }).click();
  await widget.waitFor({ state: 'hidden', timeout: 10000 });
  const fifth = await ask([{ question: 'Which region?', header: 'Region',
    options: [{ label: 'eu-west', description: '' }, { label: 'us-east', description: '' }] }]);
  const toast = page.locator('.notification-toast', { hasText: 'the agent is waiting for you: "Region" (default)' });
  await toast.waitFor({ state: 'visible', timeout: 30000 });
  assert.equal(await widget.isVisible(), false, 'no QuickPick before the person asks for it');
  await page.screenshot({ path: path.join(ARTIFACTS, 'waiting.png') });
  await toast.getByRole('button', { name: 'Answer' }).click();
  await widget.locator('.monaco-list-row', { hasText: 'us-east' }).click();
  await waitFor(async () => (await (await fetch(`${simUrl}/_sim/log`)).json()).length === 3, 'the third reply', 30000);
  assert.deepEqual((await (await fetch(`${simUrl}/_sim/log`)).json())[2], { kind: 'reply', id: fifth.id, answers: [['us-east']] });
});
