// The extension in Simplified Chinese, end to end: code-server started with
// `--locale zh-cn`, a question and a permission from the simulated OpenCode
// server appear with the extension's words in Chinese (agent text as sent),
// the person's answer reaches the server exactly once. Screenshots go to
// test-artifacts/ (quickpick-zh-CN.png, permission-zh-CN.png, waiting-zh-CN.png,
// commands-zh-CN.png).
//
// VS Code runs in a language only when a language pack for it is installed
// (without one `--locale zh-cn` falls back to English and
// `vscode.env.language` stays `en`); Microsoft's pack comes from the
// Marketplace / Open VSX, which this machine cannot reach. So the test
// installs a language pack it makes: zh-cn with no translations of VS Code's
// own UI (the workbench stays English), which is what makes VS Code's display
// language, `vscode.env.language` and `vscode.l10n` zh-cn, as for a person
// with the real pack.
// Needs CODE_SERVER_DIR, CODE_SERVER_NODE, ASK_LSP_VSIX (scripts/test.sh sets them).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { chromium } from 'playwright-core';

const { CODE_SERVER_DIR, CODE_SERVER_NODE, ASK_LSP_VSIX } = process.env;
const ROOT = path.resolve(import.meta.dirname, '..');
const ARTIFACTS = path.join(ROOT, 'test-artifacts');
const children = [];
let browser;

after(async () => {
  await browser?.close();
  for (const child of children) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {}
  }
});

function run(cmd, args, opts = {}) {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true, ...opts });
  children.push(child);
  return child;
}

function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
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

/** A zh-cn language pack without translations, as a VSIX (see the top of this file). */
function languagePack(dir) {
  fs.mkdirSync(path.join(dir, 'translations'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'translations', 'main.i18n.json'), JSON.stringify({ contents: {} }));
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({
    name: 'test-language-pack-zh-cn', publisher: 'ask-lsp-tests', version: '0.0.1', license: 'MIT',
    repository: { type: 'git', url: 'https://example.invalid/none' },
    engines: { vscode: '^1.91.0' }, categories: ['Language Packs'],
    contributes: { localizations: [{ languageId: 'zh-cn', languageName: 'Chinese Simplified', localizedLanguageName: '中文(简体)',
      translations: [{ id: 'vscode', path: './translations/main.i18n.json' }] }] },
  }));
  fs.writeFileSync(path.join(dir, 'README.md'), 'zh-cn display language for ask-lsp\'s tests\n');
  const vsix = path.join(dir, 'language-pack.vsix');
  const vsce = path.join(ROOT, 'node_modules', '@vscode', 'vsce', 'vsce');
  const packed = spawnSync(process.execPath, [vsce, 'package', '--no-dependencies', '--skip-license', '-o', vsix], { cwd: dir, encoding: 'utf8' });
  assert.equal(packed.status, 0, `the language pack packages: ${packed.stderr}`);
  return vsix;
}

test('VS Code in Chinese: the QuickPick speaks zh-CN and the answer reaches the server once', { timeout: 300000 }, async (t) => {
  if (!CODE_SERVER_DIR || !CODE_SERVER_NODE || !ASK_LSP_VSIX) {
    if (process.env.ASK_LSP_REQUIRE_E2E) assert.fail('CODE_SERVER_DIR, CODE_SERVER_NODE and ASK_LSP_VSIX are required');
    t.skip('code-server not installed (scripts/install-e2e.sh)');
    return;
  }
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ask-lsp-vscode-zh-'));
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
  const settingsFile = path.join(userData, 'User', 'settings.json');
  const settings = {
    'askLsp.servers': [{ url: simUrl }],
    'workbench.startupEditor': 'none',
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    'security.workspace.trust.enabled': false,
    'telemetry.telemetryLevel': 'off',
    'extensions.autoCheckUpdates': false,
    'update.mode': 'none',
  };
  fs.writeFileSync(settingsFile, JSON.stringify(settings));

  const entry = path.join(CODE_SERVER_DIR, 'out', 'node', 'entry.js');
  const env = { ...process.env, HOME: home };
  for (const vsix of [languagePack(path.join(home, 'language-pack')), ASK_LSP_VSIX]) {
    const install = run(CODE_SERVER_NODE, [entry, '--user-data-dir', userData, '--extensions-dir', extensions, '--install-extension', vsix], { env });
    assert.equal(await new Promise((resolve) => install.on('exit', resolve)), 0, `${path.basename(vsix)} installs`);
  }
  // The record VS Code keeps of installed language packs: written when one is
  // installed from the workbench, not by `--install-extension`.
  const pack = { id: 'ask-lsp-tests.test-language-pack-zh-cn', version: '0.0.1' };
  fs.writeFileSync(path.join(userData, 'languagepacks.json'), JSON.stringify({ 'zh-cn': {
    hash: crypto.createHash('md5').update(pack.id).update(pack.version).digest('hex'),
    extensions: [{ extensionIdentifier: { id: pack.id }, version: pack.version }],
    translations: { vscode: path.join(extensions, `${pack.id}-${pack.version}`, 'translations', 'main.i18n.json') },
    label: '中文(简体)',
  } }));

  const port = await freePort();
  run(CODE_SERVER_NODE, [entry, '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--user-data-dir', userData,
    '--extensions-dir', extensions, '--locale', 'zh-cn', '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust',
    workspace], { env });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(async () => (await fetch(`${url}/healthz`)).ok, 'code-server');
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, locale: 'zh-CN' });
  await page.goto(`${url}/?folder=${encodeURIComponent(workspace)}`);
  await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
  // The workbench runs in zh-cn (the language pack took), not in English.
  assert.equal(await page.evaluate(() => globalThis._VSCODE_NLS_LANGUAGE), 'zh-cn');
  fs.mkdirSync(ARTIFACTS, { recursive: true });

  const post = async (route, body) => (await fetch(`${simUrl}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })).json();
  const log = async () => (await fetch(`${simUrl}/_sim/log`)).json();
  const widget = page.locator('.quick-input-widget');
  const row = (text) => widget.locator('.monaco-list-row', { hasText: text });

  // A question without a header: the title is the extension's, the
  // placeholder and options the agent's (in Chinese here: shown as sent).
  const asked = await post('/_sim/ask', { questions: [{ question: '新服务用哪个数据库？', header: '',
    options: [{ label: 'Postgres', description: '关系型，默认' }, { label: 'SQLite', description: '嵌入式' }] }] });
  await row('其他…').waitFor({ state: 'visible', timeout: 90000 });
  const text = await widget.innerText();
  assert.match(text, /^问题$/m, 'the title');
  assert.match(text, /输入答案/, 'the Other… row\'s description');
  assert.match(text, /关系型，默认/, 'agent text as sent');
  assert.equal(await widget.locator('input').getAttribute('placeholder'), '新服务用哪个数据库？');
  await widget.getByRole('button', { name: /^稍后：保持等待/ }).waitFor({ timeout: 10000 });
  await widget.getByRole('button', { name: /^拒绝此问题/ }).waitFor({ timeout: 10000 });
  assert.doesNotMatch(text, /Other…|type an answer/);
  await page.screenshot({ path: path.join(ARTIFACTS, 'quickpick-zh-CN.png') });

  // 其他… → an InputBox; the typed Chinese answer reaches the server once.
  await row('其他…').click();
  await page.waitForFunction(() => !document.querySelector('.quick-input-widget .monaco-list-row'), null, { timeout: 10000 });
  await page.keyboard.insertText('用 MariaDB');
  await page.keyboard.press('Enter');
  await waitFor(async () => (await log()).length > 0, 'the reply', 30000);
  await widget.waitFor({ state: 'hidden', timeout: 10000 });
  await page.waitForTimeout(1000);
  assert.deepEqual(await log(), [{ kind: 'reply', id: asked.id, answers: [['用 MariaDB']] }], 'one reply, the typed answer');

  // A permission: the extension's rows and hint in Chinese; rejected with a reason.
  const permission = await post('/_sim/permission', { permission: 'bash', patterns: ['rm -rf build'], metadata: { command: 'rm -rf build' },
    always: ['rm *'] });
  await row('附理由拒绝…').waitFor({ state: 'visible', timeout: 60000 });
  const rows = await widget.innerText();
  for (const label of ['命令', '会话', '决定', '智能体会读到理由并继续', '显示完整请求']) assert.ok(rows.includes(label), `${label} in ${rows}`);
  assert.equal(await widget.locator('input').getAttribute('placeholder'), '请阅读请求，然后在下方选择决定（Esc：稍后）');
  await page.screenshot({ path: path.join(ARTIFACTS, 'permission-zh-CN.png') });
  await row('附理由拒绝…').click();
  await page.waitForFunction(() => !document.querySelector('.quick-input-widget .monaco-list-row'), null, { timeout: 10000 });
  assert.match(await widget.innerText(), /为什么拒绝？/);
  await page.keyboard.insertText('构建目录还要用');
  await page.keyboard.press('Enter');
  await waitFor(async () => (await log()).length > 1, 'the reject', 30000);
  await page.waitForTimeout(1000);
  assert.deepEqual((await log()).slice(1), [{ kind: 'permission', id: permission.id, reply: 'reject', message: '构建目录还要用' }]);
  await widget.waitFor({ state: 'hidden', timeout: 10000 });

  // 稍后 keeps a question pending; the next one is announced by a Chinese
  // notification whose 回答 opens it.
  await post('/_sim/ask', { questions: [{ question: 'Deploy now?', header: 'Deploy', options: [{ label: 'Yes', description: '' }] }] });
  await row('Yes').waitFor({ state: 'visible', timeout: 30000 });
  await widget.getByRole('button', { name: /^稍后/ }).click();
  await widget.waitFor({ state: 'hidden', timeout: 10000 });
  const region = await post('/_sim/ask', { questions: [{ question: 'Which region?', header: 'Region',
    options: [{ label: 'eu-west', description: '' }, { label: 'us-east', description: '' }] }] });
  const toast = page.locator('.notification-toast', { hasText: 'ask-lsp：智能体正在等待你：“Region”（default）' });
  await toast.waitFor({ state: 'visible', timeout: 30000 });
  await toast.getByRole('button', { name: '稍后' }).waitFor({ timeout: 10000 });
  await page.screenshot({ path: path.join(ARTIFACTS, 'waiting-zh-CN.png') });
  await toast.getByRole('button', { name: '回答' }).click();
  await row('us-east').click();
  await waitFor(async () => (await log()).length > 2, 'the region reply', 30000);
  await page.waitForTimeout(1000);
  assert.deepEqual((await log()).slice(2), [{ kind: 'reply', id: region.id, answers: [['us-east']] }]);
  await widget.waitFor({ state: 'hidden', timeout: 10000 });

  // Command titles come from package.nls.zh-cn.json.
  await page.keyboard.press('F1');
  await widget.locator('input').waitFor({ state: 'visible', timeout: 10000 });
  await page.keyboard.type('Ask: ');
  for (const title of ['回答等待中的提示', '列出等待中的提示', '拒绝等待中的提示', '重启 ask-lsp']) {
    await row(title).waitFor({ state: 'visible', timeout: 10000 });
  }
  await page.screenshot({ path: path.join(ARTIFACTS, 'commands-zh-CN.png') });
  await page.keyboard.press('Escape');
});
