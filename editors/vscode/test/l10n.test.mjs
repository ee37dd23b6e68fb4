// The extension's catalogues (no VS Code needed): every language has every
// key with the same placeholders, every string the code translates is in
// them, and the locale rule shared with the binary and the Neovim plugin.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import test from 'node:test';

const require = createRequire(import.meta.url);
const l10n = require('../out/l10n.js');
const logic = require('../out/logic.js');
const ROOT = path.resolve(import.meta.dirname, '..');
const readJson = (file) => JSON.parse(fs.readFileSync(path.join(ROOT, file), 'utf8'));

/** Each `{n}` of a string, sorted: a translation keeps all of them. */
const placeholders = (text) => (text.match(/\{\d+\}/g) ?? []).sort();

/** What one catalogue lacks of another, or has that differs in placeholders. */
function compare(source, translated) {
  return {
    missing: Object.keys(source).filter((k) => !(k in translated)),
    extra: Object.keys(translated).filter((k) => !(k in source)),
    placeholders: Object.keys(source).filter((k) => k in translated
      && placeholders(source[k]).join() !== placeholders(translated[k]).join()),
  };
}

/** The English strings src/ passes to `l10n.t(...)` (or `vscode.l10n.t`), as literals. */
function translatedStrings(sources) {
  const found = new Set();
  for (const source of sources) {
    for (const call of source.matchAll(/\bl10n\.t\(\s*(['"`])((?:\\.|(?!\1).)*)\1/gs)) {
      assert.notEqual(call[1], '`', `a template literal cannot be a catalogue key: ${call[2]}`);
      const text = call[2].replace(/\\(['"\\])/g, '$1');
      assert.ok(!text.includes('\\'), `an escape the check does not read: ${call[2]}`);
      found.add(text);
    }
  }
  return found;
}

const sources = fs.readdirSync(path.join(ROOT, 'src')).filter((f) => f.endsWith('.ts'))
  .map((f) => fs.readFileSync(path.join(ROOT, 'src', f), 'utf8'));
const manifest = readJson('package.json');
const nls = readJson('package.nls.json');
const nlsLanguages = fs.readdirSync(ROOT).filter((f) => /^package\.nls\..+\.json$/.test(f));
const bundles = fs.readdirSync(path.join(ROOT, 'l10n')).filter((f) => /^bundle\.l10n\..+\.json$/.test(f));

test('every package.nls.<language>.json has the keys of package.nls.json, no others, with the same placeholders', () => {
  assert.ok(nlsLanguages.includes('package.nls.zh-cn.json'));
  for (const file of nlsLanguages) {
    assert.deepEqual(compare(nls, readJson(file)), { missing: [], extra: [], placeholders: [] }, file);
  }
});

test('every %key% in package.json is in package.nls.json, and every key there is used', () => {
  const used = new Set([...JSON.stringify(manifest).matchAll(/"%([^%"]+)%"/g)].map((m) => m[1]));
  assert.deepEqual([...used].filter((k) => !(k in nls)), [], 'keys package.nls.json lacks');
  assert.deepEqual(Object.keys(nls).filter((k) => !used.has(k)), [], 'keys nobody uses');
  // The contributions a person reads are all keys, none left in English.
  for (const command of manifest.contributes.commands) {
    assert.match(command.title, /^%.+%$/, command.command);
    assert.match(command.category, /^%.+%$/, command.command);
  }
  const described = JSON.stringify(manifest.contributes.configuration.properties)
    .match(/"(markdownDescription|description)":"[^"%][^"]*"/g);
  assert.equal(described, null, 'a setting description outside package.nls.json');
});

test('every l10n bundle holds exactly the strings src/ translates, with the same placeholders', () => {
  assert.equal(manifest.l10n, './l10n');
  assert.ok(bundles.includes('bundle.l10n.zh-cn.json'));
  const strings = translatedStrings(sources);
  assert.ok(strings.has('Other…') && strings.has('Send') && strings.has('Reject with a reason…'), 'the extraction finds the calls');
  const english = Object.fromEntries([...strings].map((s) => [s, s]));
  for (const file of bundles) {
    assert.deepEqual(compare(english, readJson(path.join('l10n', file))), { missing: [], extra: [], placeholders: [] }, file);
  }
  // The VSIX carries the catalogues (.vscodeignore excludes everything else).
  const ignore = fs.readFileSync(path.join(ROOT, '.vscodeignore'), 'utf8').split('\n');
  for (const kept of ['!package.nls.json', '!package.nls.*.json', '!l10n/*.json']) assert.ok(ignore.includes(kept), kept);
});

test('the comparison catches a missing key, an extra one and a changed placeholder', () => {
  assert.deepEqual(compare({ a: 'A {0}', b: 'B', c: 'C {0} {1}' }, { a: 'ä {1}', c: 'ç {1} {0}', d: 'D' }),
    { missing: ['b'], extra: ['d'], placeholders: ['a'] });
  assert.deepEqual([...translatedStrings([`l10n.t('It\\'s {0}', x); vscode.l10n.t("Say \\"hi\\""); other.t('no')`])],
    ["It's {0}", 'Say "hi"']);
  assert.throws(() => translatedStrings(['l10n.t(`${x} more`)']), /template literal/);
});

test('locale tags resolve as on every surface: Simplified Chinese or English', () => {
  const table = {
    'zh-CN': 'zh-CN', 'zh-cn': 'zh-CN', zh: 'zh-CN', 'zh_CN.UTF-8@x': 'zh-CN', 'zh-SG': 'zh-CN', 'zh-Hans': 'zh-CN',
    'zh-Hans-CN': 'zh-CN', 'ZH_HANS_SG': 'zh-CN', 'zh-TW': 'en', 'zh-HK': 'en', 'zh-Hant': 'en', 'zh-Hant-TW': 'en',
    en: 'en', 'en-US': 'en', C: 'en', POSIX: 'en', '': 'en', fr: 'en', 'zhx': 'en', '@@': 'en',
  };
  for (const [tag, locale] of Object.entries(table)) assert.equal(l10n.resolveLocale(tag), locale, tag);
  // The setting wins over VS Code's display language, even to say English.
  assert.equal(l10n.chooseLocale('zh-CN', 'en'), 'zh-CN');
  assert.equal(l10n.chooseLocale('en', 'zh-cn'), 'en');
  assert.equal(l10n.chooseLocale('', 'zh-cn'), 'zh-CN');
  assert.equal(l10n.chooseLocale('  ', 'zh-tw'), 'en');
  assert.equal(l10n.chooseLocale(undefined, 'de'), 'en');
  assert.equal(l10n.BUNDLES['zh-CN'], 'bundle.l10n.zh-cn.json');
});

test('an explicit locale goes to the server as initializationOptions.locale; none sends "" (follow the editor)', () => {
  assert.equal(logic.toServerConfig({ locale: 'zh-CN' }).locale, 'zh-CN');
  assert.equal(logic.toServerConfig({ locale: ' zh_CN ' }).locale, 'zh_CN');
  // "" is sent, not left out: the server keeps a key an update omits.
  assert.equal(logic.toServerConfig({ locale: '' }).locale, '');
  assert.equal(logic.toServerConfig({}).locale, '');
});

test('with the zh-CN bundle the extension speaks Chinese around agent text left as it came', (t) => {
  t.after(() => l10n.useTranslations(l10n.format));
  l10n.useTranslations(l10n.fromBundle(readJson('l10n/bundle.l10n.zh-cn.json')));
  const question = { question: 'Which database?', header: '', multiple: false, custom: true,
    options: [{ label: 'Postgres', description: 'Relational' }] };
  assert.deepEqual(logic.itemsFor(question), [
    { kind: 'option', label: 'Postgres', description: 'Relational' },
    { kind: 'other', label: '其他…', description: '输入答案' },
  ]);
  assert.equal(logic.stepTitle(question), '问题');
  assert.deepEqual(logic.answerFrom(question, []), { error: '请选择一个选项。' });
  assert.equal(logic.parseTyped({ id: 'n', title: 'Name', type: 'text', required: true, minLength: 3 }, 'ab').error,
    '至少 3 个字符（当前 2 个）');
  assert.equal(logic.fieldLabel({ title: 'Note', required: false }), 'Note（可选）');
  assert.equal(logic.waitingMessage({ key: 'k', server: 'default', title: 'Deploy?', origin: { agent: 'build' } }),
    'ask-lsp：智能体正在等待你：“Deploy?”（default，智能体 build）');
  // A string a catalogue lacks stays English, placeholders filled.
  assert.equal(l10n.t('{0} not in any catalogue', 7), '7 not in any catalogue');
  l10n.useTranslations(l10n.format);
  assert.equal(logic.stepTitle(question), 'Question');
});
