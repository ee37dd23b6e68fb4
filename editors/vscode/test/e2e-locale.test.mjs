// The `askLsp.locale` setting end to end, in a VS Code whose display
// language is zh-cn (the test-made language pack, see testkit/harness.mjs):
// set to "en", it wins over VS Code's language for the extension's words
// AND for the words ask-lsp computes (a permission's title "Run …", its
// choice "Allow once"), since the extension forwards it as
// initializationOptions.locale; changed to "zh-CN" while VS Code runs (in
// the settings JSON editor, as a person would), the next prompt is worded in
// Chinese by both. Each answer reaches the simulated server exactly once.
// Screenshots: test-artifacts/permission-en-in-zh.png,
// settings-switched-zh-CN.png, permission-switched-zh-CN.png.
// Needs CODE_SERVER_DIR, CODE_SERVER_NODE, ASK_LSP_VSIX (scripts/test.sh sets them).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, test } from 'node:test';
import { artifact, cleanup, haveCodeServer, openWorkbench, startCodeServer, startSim, waitFor } from '../testkit/harness.mjs';

after(cleanup);

/** Any Han character: none is in the agent text sent here, so one on screen is a word of ask-lsp's. */
const HAN = /\p{Script=Han}/u;
const rm = { permission: 'bash', patterns: ['rm -rf build'], metadata: { command: 'rm -rf build' }, always: ['rm *'] };

let shared;
/** One code-server in zh-cn with `askLsp.locale: "en"` for both tests (they run in order). */
function workbench(t) {
  if (!haveCodeServer(t)) return undefined;
  shared ??= (async () => {
    const { simUrl, post, log } = await startSim();
    const server = await startCodeServer({ settings: { 'askLsp.servers': [{ url: simUrl }], 'askLsp.locale': 'en' },
      zhCN: true, prefix: 'ask-lsp-vscode-locale-' });
    const page = await openWorkbench(server, { locale: 'zh-CN' });
    const widget = page.locator('.quick-input-widget');
    const row = (text) => widget.locator('.monaco-list-row', { hasText: text });
    /** Posts a permission, answers it with the row `label`; exactly that answer reaches the server. */
    const answerPermission = async (label, check) => {
      const before = (await log()).length;
      const asked = await post('/_sim/permission', rm);
      await row(label).waitFor({ state: 'visible', timeout: 60000 });
      await check();
      await row(label).click();
      await waitFor(async () => (await log()).length > before, 'the permission reply', 30000);
      await widget.waitFor({ state: 'hidden', timeout: 10000 });
      await page.waitForTimeout(1000);
      assert.deepEqual((await log()).slice(before), [{ kind: 'permission', id: asked.id, reply: 'once', message: null }], 'one reply, once');
    };
    return { page, post, log, widget, row, answerPermission, settingsFile: server.settingsFile };
  })();
  return shared;
}

test('askLsp.locale "en" in a Chinese VS Code: the extension and ask-lsp speak English', { timeout: 300000 }, async (t) => {
  const started = workbench(t);
  if (!started) return;
  const { page, post, log, widget, row, answerPermission } = await started;
  // VS Code itself runs in zh-cn: the setting is what makes the words English.
  assert.equal(await page.evaluate(() => globalThis._VSCODE_NLS_LANGUAGE), 'zh-cn');

  // A question without a header: the title and the Other… row are the extension's.
  const asked = await post('/_sim/ask', { questions: [{ question: 'Which database?', header: '',
    options: [{ label: 'Postgres', description: 'Relational' }, { label: 'SQLite', description: 'Embedded' }] }] });
  await row('Other…').waitFor({ state: 'visible', timeout: 90000 });
  const text = await widget.innerText();
  assert.match(text, /^Question$/m, 'the title');
  assert.match(text, /type an answer/);
  await widget.getByRole('button', { name: /^Later: keep it pending/ }).waitFor({ timeout: 10000 });
  await widget.getByRole('button', { name: /^Reject the question/ }).waitFor({ timeout: 10000 });
  assert.doesNotMatch(text, HAN);
  await row('SQLite').click();
  await waitFor(async () => (await log()).length > 0, 'the reply', 30000);
  await widget.waitFor({ state: 'hidden', timeout: 10000 });
  await page.waitForTimeout(1000);
  assert.deepEqual(await log(), [{ kind: 'reply', id: asked.id, answers: [['SQLite']] }], 'one reply');

  // A permission: "Permission: … — " and the hints are the extension's;
  // "Run rm -rf build" and "Allow once" are ask-lsp's.
  await answerPermission('Allow once', async () => {
    const rows = await widget.innerText();
    assert.match(rows, /^Permission: bash — Run rm -rf build$/m, 'the title');
    for (const label of ['Allow always (rm *)', 'run it this one time', 'Reject with a reason…', 'Show the whole request']) {
      assert.ok(rows.includes(label), `${label} in ${rows}`);
    }
    assert.equal(await widget.locator('input').getAttribute('placeholder'), 'Read the request, then pick a decision below (Esc: later)');
    assert.doesNotMatch(rows, HAN);
    await page.screenshot({ path: artifact('permission-en-in-zh.png') });
  });
});

test('askLsp.locale changed to "zh-CN" while VS Code runs: the next prompt is in Chinese, extension and ask-lsp alike', { timeout: 300000 }, async (t) => {
  const started = workbench(t);
  if (!started) return;
  const { page, widget, answerPermission, settingsFile } = await started;
  /** Runs the command titled `title` from the command palette. */
  const runCommand = async (title) => {
    await page.keyboard.press('F1');
    await widget.locator('input').waitFor({ state: 'visible', timeout: 10000 });
    await page.keyboard.type(title);
    await widget.locator('.monaco-list-row', { hasText: title }).first().waitFor({ timeout: 10000 });
    await page.keyboard.press('Enter');
  };

  // The setting changed in the settings JSON editor and saved, as a person
  // would (VS Code does not notice the file rewritten behind its back).
  await runCommand('Preferences: Open User Settings (JSON)');
  const editor = page.locator('.editor-instance .monaco-editor', { hasText: 'askLsp.locale' });
  await editor.waitFor({ state: 'visible', timeout: 20000 });
  await editor.locator('.view-lines').click();
  const settings = JSON.parse(fs.readFileSync(settingsFile, 'utf8'));
  await page.keyboard.press('Control+A');
  await page.keyboard.insertText(JSON.stringify({ ...settings, 'askLsp.locale': 'zh-CN' }));
  // The editor closed the brace typed first: what follows the text goes.
  await page.keyboard.press('Control+Shift+End');
  await page.keyboard.press('Delete');
  await page.keyboard.press('Control+S');
  await waitFor(() => JSON.parse(fs.readFileSync(settingsFile, 'utf8'))['askLsp.locale'] === 'zh-CN', 'the saved setting', 10000);
  await page.screenshot({ path: artifact('settings-switched-zh-CN.png') });
  // The editor opens as a modal, which keeps F1 to itself: closed.
  await page.keyboard.press('Escape');
  await editor.waitFor({ state: 'hidden', timeout: 10000 });

  // The extension's words follow at once: its command (the title is VS
  // Code's, zh-cn) says nothing is pending in Chinese.
  await waitFor(async () => {
    await runCommand('列出等待中的提示');
    const toast = page.locator('.notification-toast', { hasText: 'ask-lsp：没有等待中的提示' });
    await toast.waitFor({ state: 'visible', timeout: 3000 });
    return true;
  }, 'the extension in Chinese', 30000);

  await answerPermission('仅此一次允许', async () => {
    const rows = await widget.innerText();
    assert.match(rows, /^权限：bash — 运行 rm -rf build$/m, 'the title: the extension\'s words around ask-lsp\'s');
    for (const label of ['始终允许（rm *）', '附理由拒绝…', '显示完整请求']) assert.ok(rows.includes(label), `${label} in ${rows}`);
    assert.equal(await widget.locator('input').getAttribute('placeholder'), '请阅读请求，然后在下方选择决定（Esc：稍后）');
    assert.doesNotMatch(rows, /Permission|Run rm|Allow|Reject|Show the/);
    await page.screenshot({ path: artifact('permission-switched-zh-CN.png') });
  });
});
