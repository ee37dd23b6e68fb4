// The extension in Simplified Chinese, end to end: code-server started with
// `--locale zh-cn`, a question and a permission from the simulated OpenCode
// server appear with the extension's words in Chinese (agent text as sent),
// the person's answer reaches the server exactly once. Screenshots go to
// test-artifacts/ (quickpick-zh-CN.png, permission-zh-CN.png, waiting-zh-CN.png,
// commands-zh-CN.png).
//
// VS Code runs in zh-cn through a language pack the test makes (see
// languagePack in testkit/harness.mjs): VS Code's own UI stays English.
// Needs CODE_SERVER_DIR, CODE_SERVER_NODE, ASK_LSP_VSIX (scripts/test.sh sets them).
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { artifact, cleanup, haveCodeServer, openWorkbench, startCodeServer, startSim, waitFor } from '../testkit/harness.mjs';

after(cleanup);

test('VS Code in Chinese: the QuickPick speaks zh-CN and the answer reaches the server once', { timeout: 300000 }, async (t) => {
  if (!haveCodeServer(t)) return;
  const { simUrl, post, log } = await startSim();
  const server = await startCodeServer({ settings: { 'askLsp.servers': [{ url: simUrl }] }, zhCN: true, prefix: 'ask-lsp-vscode-zh-' });
  const page = await openWorkbench(server, { locale: 'zh-CN' });
  // The workbench runs in zh-cn (the language pack took), not in English.
  assert.equal(await page.evaluate(() => globalThis._VSCODE_NLS_LANGUAGE), 'zh-cn');

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
  await page.screenshot({ path: artifact('quickpick-zh-CN.png') });

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
  await page.screenshot({ path: artifact('permission-zh-CN.png') });
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
  await page.screenshot({ path: artifact('waiting-zh-CN.png') });
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
  await page.screenshot({ path: artifact('commands-zh-CN.png') });
  await page.keyboard.press('Escape');
});
