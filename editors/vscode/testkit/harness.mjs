// What the end-to-end tests (test/e2e*.test.mjs) and the bench
// (benches/vscode_visible.mjs) share: child processes killed as whole
// groups at the end, the simulated server, a code-server with the VSIX
// installed (optionally in zh-cn through a test-made language pack) and
// Chromium on its workbench. It lives outside test/ so that
// `node --test test/` does not run it as a test file.
// Reads CODE_SERVER_DIR, CODE_SERVER_NODE, ASK_LSP_VSIX, ASK_SIM_BIN
// (scripts/test.sh sets them).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const ROOT = path.resolve(import.meta.dirname, '..');
const { CODE_SERVER_DIR, CODE_SERVER_NODE, ASK_LSP_VSIX } = process.env;

const children = [];
const homes = [];
let browser;

/** Each child leads its own process group (code-server forks workers and
 * the extension host, which starts ask-lsp): kills whole groups, then
 * removes the code-server homes (profiles) made in the temp folder. */
export async function cleanup() {
  await browser?.close().catch(() => {});
  for (const child of children) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {}
  }
  for (const home of homes.splice(0)) fs.rmSync(home, { recursive: true, force: true, maxRetries: 3 });
}

/** A child in its own process group, killed by `cleanup`. */
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

export async function waitFor(condition, what, ms = 60000) {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      if (await condition()) return;
    } catch {}
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * False (the test skipped) when code-server is not installed; a failure
 * instead under ASK_LSP_REQUIRE_E2E.
 */
export function haveCodeServer(t) {
  if (CODE_SERVER_DIR && CODE_SERVER_NODE && ASK_LSP_VSIX) return true;
  if (process.env.ASK_LSP_REQUIRE_E2E) assert.fail('CODE_SERVER_DIR, CODE_SERVER_NODE and ASK_LSP_VSIX are required');
  t.skip('code-server not installed (scripts/install-e2e.sh)');
  return false;
}

/** ask-sim serving on a free port; its URL, and `post`/`log` to drive it. */
export async function startSim() {
  const sim = run(process.env.ASK_SIM_BIN, ['serve', '--port', '0']);
  const simUrl = await new Promise((resolve) => {
    sim.stdout.setEncoding('utf8');
    sim.stdout.on('data', (line) => {
      const match = /listening on (\S+)/.exec(line);
      if (match) resolve(match[1]);
    });
  });
  const post = async (route, body) => (await fetch(`${simUrl}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })).json();
  const log = async () => (await fetch(`${simUrl}/_sim/log`)).json();
  return { simUrl, post, log };
}

/** A workbench without distractions: no start page, chat panel, trust prompt, telemetry or updates. */
const QUIET = {
  'workbench.startupEditor': 'none',
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'security.workspace.trust.enabled': false,
  'telemetry.telemetryLevel': 'off',
  'extensions.autoCheckUpdates': false,
  'update.mode': 'none',
};

/**
 * VS Code runs in a language only when a language pack for it is installed
 * (without one `--locale zh-cn` falls back to English and
 * `vscode.env.language` stays `en`); Microsoft's pack comes from the
 * Marketplace / Open VSX, which this machine cannot reach. So this is a
 * zh-cn pack with no translations of VS Code's own UI (the workbench stays
 * English), which makes VS Code's display language, `vscode.env.language`
 * and `vscode.l10n` zh-cn, as for a person with the real pack. Returns the
 * VSIX.
 */
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

/** The record VS Code keeps of installed language packs: written when one is
 * installed from the workbench, not by `--install-extension`. */
function recordLanguagePack(userData, extensions) {
  const pack = { id: 'ask-lsp-tests.test-language-pack-zh-cn', version: '0.0.1' };
  fs.writeFileSync(path.join(userData, 'languagepacks.json'), JSON.stringify({ 'zh-cn': {
    hash: crypto.createHash('md5').update(pack.id).update(pack.version).digest('hex'),
    extensions: [{ extensionIdentifier: { id: pack.id }, version: pack.version }],
    translations: { vscode: path.join(extensions, `${pack.id}-${pack.version}`, 'translations', 'main.i18n.json') },
    label: '中文(简体)',
  } }));
}

/**
 * code-server in a fresh home with ASK_LSP_VSIX installed and `settings`
 * (over QUIET) as the user's settings; `zhCN` runs it in zh-cn. `folder`
 * is the workspace (default: an empty one in the home). Resolves once it
 * answers, with its URL, the folder and the settings file.
 */
export async function startCodeServer({ settings, zhCN = false, folder, prefix = 'ask-lsp-vscode-', ms = 60000 }) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  homes.push(home);
  const userData = path.join(home, 'user-data');
  const extensions = path.join(home, 'extensions');
  const workspace = folder ?? path.join(home, 'workspace');
  fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
  fs.mkdirSync(workspace, { recursive: true });
  const settingsFile = path.join(userData, 'User', 'settings.json');
  fs.writeFileSync(settingsFile, JSON.stringify({ ...QUIET, ...settings }));

  const entry = path.join(CODE_SERVER_DIR, 'out', 'node', 'entry.js');
  const env = { ...process.env, HOME: home };
  const vsixes = zhCN ? [languagePack(path.join(home, 'language-pack')), ASK_LSP_VSIX] : [ASK_LSP_VSIX];
  for (const vsix of vsixes) {
    const install = run(CODE_SERVER_NODE, [entry, '--user-data-dir', userData, '--extensions-dir', extensions, '--install-extension', vsix],
      { env, stdio: 'ignore' });
    const status = await new Promise((resolve) => install.on('exit', resolve));
    if (status !== 0) throw new Error(`${path.basename(vsix)} did not install (${status})`);
  }
  if (zhCN) recordLanguagePack(userData, extensions);

  const port = await freePort();
  run(CODE_SERVER_NODE, [entry, '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--user-data-dir', userData,
    '--extensions-dir', extensions, ...(zhCN ? ['--locale', 'zh-cn'] : []), '--disable-telemetry', '--disable-update-check',
    '--disable-workspace-trust', workspace], { env, stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(async () => (await fetch(`${url}/healthz`)).ok, 'code-server', ms);
  return { url, workspace, settingsFile };
}

/** Chromium (closed by `cleanup`) on code-server's workbench for the folder, once it is drawn. */
export async function openWorkbench({ url, workspace }, { locale, ms = 60000 } = {}) {
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, ...(locale ? { locale } : {}) });
  await page.goto(`${url}/?folder=${encodeURIComponent(workspace)}`);
  await page.waitForSelector('.monaco-workbench', { timeout: ms });
  return page;
}

/** Where a screenshot named `name` goes: test-artifacts/. */
export function artifact(name) {
  const dir = path.join(ROOT, 'test-artifacts');
  fs.mkdirSync(dir, { recursive: true });
  return path.join(dir, name);
}
