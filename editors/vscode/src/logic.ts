// The extension's logic, kept free of `vscode` so node's test runner can
// check it: what a person's picks become, how a prompt is presented, and
// the configuration ask-lsp is given.

import * as l10n from './l10n';
import {
  AskParams, AskResult, Effect, FieldValue, Form, FormField, PermissionChoice, QuestionInfo, TextFormat, requestTitle,
} from './protocol';

/** One row of a question's pick list. */
export interface Item {
  kind: 'option' | 'other';
  label: string;
  description?: string;
}

export function itemsFor(question: QuestionInfo): Item[] {
  const items: Item[] = question.options.map((o) => ({
    kind: 'option' as const,
    label: o.label,
    description: o.description || undefined,
  }));
  if (question.custom) {
    items.push({ kind: 'other', label: l10n.t('Other…'), description: l10n.t('type an answer') });
  }
  return items;
}

/** A QuickPick's title; VS Code adds the step counter ("(1/2)") itself. */
export function stepTitle(question: QuestionInfo): string {
  return question.header || l10n.t('Question');
}

/**
 * What a person's picks on one question become, or an error to show them.
 * `typed` is the text entered after picking "Other…" (trimmed here).
 */
export function answerFrom(
  question: QuestionInfo,
  picked: Item[],
  typed?: string,
): { answer: string[] } | { error: string } {
  const answer = picked.filter((i) => i.kind === 'option').map((i) => i.label);
  const wantsTyped = picked.some((i) => i.kind === 'other');
  if (wantsTyped) {
    // A secret goes exactly as typed (a space may be part of it).
    const text = question.secret ? (typed ?? '') : (typed ?? '').trim();
    if (!text) return { error: l10n.t('Type an answer, or pick an option.') };
    answer.push(text);
  }
  if (!question.multiple && answer.length !== 1) {
    return { error: l10n.t('Pick one option.') };
  }
  return { answer };
}

export function statusText(pending: number): string {
  return pending === 0 ? '' : `$(question) ${pending}`;
}

/**
 * How a prompt is presented: the QuickPick straight away, or first a
 * notification (Answer / Later) when the person is not looking (the window
 * is not focused) or chose Later on the last prompt, so a QuickPick does not
 * jump at someone who is busy elsewhere.
 */
export function presentation(state: { focused: boolean; laterChosen: boolean }): 'quickpick' | 'notification' {
  return state.focused && !state.laterChosen ? 'quickpick' : 'notification';
}

/** The notification's text: what waits, where, and who asks. */
export function waitingMessage(params: AskParams): string {
  const agent = params.origin?.agent;
  return agent
    ? l10n.t('ask-lsp: the agent is waiting for you: "{0}" ({1}, agent {2})', requestTitle(params), params.server, agent)
    : l10n.t('ask-lsp: the agent is waiting for you: "{0}" ({1})', requestTitle(params), params.server);
}

export interface Settings {
  servers?: Array<Record<string, string>>;
  directory?: string;
  surface?: string;
  policy?: unknown;
  notify?: unknown;
  /** `askLsp.locale`: `""` (or unset) lets the server follow `initialize.locale`. */
  locale?: string;
  /** `askLsp.codexHomes`: absolute paths; ask-lsp refuses a relative one. */
  codexHomes?: string[];
}

/** The ask-lsp configuration (initializationOptions / didChangeConfiguration). */
export function toServerConfig(settings: Settings): Record<string, unknown> {
  const directory = settings.directory || undefined;
  const servers = (settings.servers ?? []).map((s) => ({
    ...s,
    directory: s.directory || directory,
  }));
  const config: Record<string, unknown> = {
    servers: servers.length > 0 ? servers : [{ directory }],
  };
  if (settings.surface) config.surface = settings.surface;
  if (settings.policy) config.policy = settings.policy;
  if (settings.notify) config.notify = settings.notify;
  // Always sent, "" included: a settings update that left `locale` out would
  // keep the language set before (the server keeps keys an update omits).
  config.locale = settings.locale?.trim() ?? '';
  // Always sent too, for the same reason: emptied, it stops the homes.
  config.codexHomes = settings.codexHomes ?? [];
  return config;
}

// ---------------------------------------------------------------------------
// Permissions

/**
 * Splits text into rows a QuickPick shows whole: VS Code cuts a long row
 * with "…", which could hide the dangerous end of a command, so every row is
 * kept under `width` columns (wide characters count two), breaking at a
 * space where one is near, else anywhere. Nothing is dropped: joining the
 * rows of a line gives it back.
 */
export function wrapRows(text: string, width = 44): string[] {
  const rows: string[] = [];
  for (const line of text.split('\n')) {
    let row = '';
    let used = 0;
    let lastSpace = -1; // index in `row` just after the last space
    for (const ch of line) {
      const w = columns(ch);
      if (used + w > width && row) {
        const cut = lastSpace > row.length / 2 ? lastSpace : row.length;
        rows.push(row.slice(0, cut));
        row = row.slice(cut);
        used = [...row].reduce((n, c) => n + columns(c), 0);
        lastSpace = -1;
      }
      row += ch;
      used += w;
      if (ch === ' ') lastSpace = row.length;
    }
    if (row) rows.push(row);
  }
  return rows;
}

/** Columns a character takes: two for East Asian wide ones and emoji. */
function columns(ch: string): number {
  const code = ch.codePointAt(0) ?? 0;
  return (code >= 0x1100 && code <= 0x115f) || (code >= 0x2e80 && code <= 0xa4cf) || (code >= 0xac00 && code <= 0xd7a3)
    || (code >= 0xf900 && code <= 0xfaff) || (code >= 0xfe30 && code <= 0xfe4f) || (code >= 0xff00 && code <= 0xff60)
    || (code >= 0xffe0 && code <= 0xffe6) || code >= 0x1f000 ? 2 : 1;
}

/** One row of a permission's QuickPick. */
export type PermissionRow =
  | { kind: 'separator'; label: string }
  | { kind: 'info'; label: string; description?: string }
  | { kind: 'choice'; label: string; description: string; choice: PermissionChoice }
  | { kind: 'reason' | 'diff' | 'details'; label: string; description: string };

function effectHint(effect: Effect): string {
  switch (effect) {
    case 'allowOnce':
      return l10n.t('run it this one time');
    case 'allowAlways':
      return l10n.t('no more asking for these in this project');
    case 'rejectOnce':
      return l10n.t('the agent stops this turn');
    case 'rejectAlways':
      return l10n.t('and refuse it from now on');
    default:
      return '';
  }
}

/** Where a prompt comes from: session, server, project, agent. */
export function whereFrom(params: AskParams): string {
  return [params.server, params.source?.directory, params.origin?.agent && l10n.t('agent {0}', params.origin.agent)]
    .filter(Boolean).join(' · ');
}

/**
 * A permission as QuickPick rows: first what is asked (the whole command,
 * the patterns, the session), then the decisions. Nothing that allows comes
 * first, so Enter on a freshly shown prompt never grants it.
 */
export function permissionRows(params: AskParams): PermissionRow[] {
  const p = params.permission!;
  const rows: PermissionRow[] = [];
  if (p.command) {
    rows.push({ kind: 'separator', label: l10n.t('Command') });
    wrapRows(p.command).forEach((line, i) => rows.push({ kind: 'info', label: (i === 0 ? '$ ' : '  ') + line }));
  }
  const patterns = p.patterns.filter((pattern) => pattern !== p.command);
  if (patterns.length > 0) {
    rows.push({ kind: 'separator', label: p.command ? l10n.t('Patterns') : l10n.t('Files and patterns') });
    for (const pattern of patterns) {
      wrapRows(pattern).forEach((line, i) => rows.push({ kind: 'info', label: (i === 0 ? '• ' : '  ') + line }));
    }
  }
  rows.push({ kind: 'separator', label: l10n.t('Session') });
  rows.push({ kind: 'info', label: params.sessionID, description: whereFrom(params) });
  rows.push({ kind: 'separator', label: l10n.t('Decide') });
  for (const choice of p.choices) {
    // A label too long for its row ("Allow always (<every pattern>)") is
    // also shown whole just above it: what "always" approves matters.
    const labelRows = wrapRows(choice.label);
    if (labelRows.length > 1) labelRows.forEach((line, i) => rows.push({ kind: 'info', label: (i === 0 ? '' : '  ') + line }));
    rows.push({ kind: 'choice', label: choice.label, description: labelRows.length > 1 ? '' : effectHint(choice.effect), choice });
  }
  rows.push({ kind: 'reason', label: l10n.t('Reject with a reason…'), description: l10n.t('the agent reads it and goes on') });
  if (p.diff) rows.push({ kind: 'diff', label: l10n.t('Show the diff'), description: l10n.t('opens it in an editor') });
  rows.push({ kind: 'details', label: l10n.t('Show the whole request'), description: l10n.t('opens it in an editor') });
  return rows;
}

/** The QuickPick's title: what kind of action, and its one-line title. */
export function permissionTitle(params: AskParams): string {
  const title = requestTitle(params);
  // ask-lsp cuts long titles: say so, so a cut command does not look whole.
  const cut = [...params.permission!.title].length > [...title].length ? '…' : '';
  return l10n.t('Permission: {0} — {1}', params.permission!.action, title + cut);
}

/** The whole request as plain text, for the read-only document. */
export function permissionDocument(params: AskParams): string {
  const p = params.permission!;
  const lines = [
    l10n.t('Permission: {0}', p.action),
    l10n.t('Title: {0}', p.title),
    l10n.t('Session: {0} ({1})', params.sessionID, whereFrom(params)),
  ];
  if (p.command) lines.push('', l10n.t('Command:'), p.command);
  if (p.patterns.length > 0) lines.push('', l10n.t('Patterns:'), ...p.patterns.map((pattern) => `  ${pattern}`));
  lines.push('', l10n.t('Choices:'), ...p.choices.map((c) => `  ${c.label} (${c.id})`));
  if (p.diff) lines.push('', l10n.t('Diff:'), p.diff);
  return lines.join('\n') + '\n';
}

/**
 * The file an edit is to: an absolute path among the patterns (OpenCode adds
 * the edit's full path there), else the diff's `+++` path in the request's
 * directory; undefined when neither names one.
 */
export function editTarget(params: AskParams): string | undefined {
  const p = params.permission!;
  const absolute = [...p.patterns].reverse().find((pattern) => pattern.startsWith('/') || /^[A-Za-z]:[\\/]/.test(pattern));
  if (absolute) return absolute;
  const named = /^\+\+\+ ([^\t\n]+)/m.exec(p.diff ?? '')?.[1];
  if (!named || named === '/dev/null') return undefined;
  if (named.startsWith('/')) return named;
  const directory = params.source?.directory;
  return directory ? `${directory.replace(/\/+$/, '')}/${named.replace(/^b\//, '')}` : undefined;
}

/**
 * `text` with the unified `diff` applied, or why it does not apply: every
 * context and removed line must be where its hunk says (the file may have
 * changed since the agent read it).
 */
export function applyDiff(text: string, diff: string): { text: string } | { error: string } {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const old = text === '' ? [] : text.replace(/\r?\n$/, '').split(/\r?\n/);
  const hunks = diffHunks(diff);
  if (!hunks) return { error: 'the diff is not a unified diff' };
  const out: string[] = [];
  let next = 1;
  for (const h of hunks) {
    const start = h.count === 0 ? h.start + 1 : h.start;
    if (start < next) return { error: 'its hunks overlap' };
    if (start - 1 > old.length) return { error: `it starts past the end (line ${start})` };
    out.push(...old.slice(next - 1, start - 1));
    let at = start;
    for (const line of h.lines) {
      const sign = line[0];
      const body = line.slice(1);
      if (sign === '+') {
        out.push(body);
        continue;
      }
      if (old[at - 1] !== body) return { error: `line ${at} is not what the diff expects` };
      if (sign === ' ') out.push(body);
      at += 1;
    }
    next = at;
  }
  out.push(...old.slice(next - 1));
  return { text: out.length ? out.join(eol) + eol : '' };
}

/** The hunks of a unified diff; undefined when it is not one (or has none). */
export function diffHunks(diff: string): Array<{ start: number; count: number; lines: string[] }> | undefined {
  // A hunk takes as many lines as its header counts (an empty one is an
  // empty context line whose space was trimmed); what follows is not its.
  const hunks: Array<{ start: number; count: number; lines: string[] }> = [];
  let hunk: (typeof hunks)[number] | undefined;
  let oldLeft = 0;
  let newLeft = 0;
  for (const line of diff.split('\n')) {
    const head = /^@@ -(\d+)(?:,(\d+))? \+\d+(?:,(\d+))? @@/.exec(line);
    if (head) {
      hunk = { start: Number(head[1]), count: head[2] === undefined ? 1 : Number(head[2]), lines: [] };
      oldLeft = hunk.count;
      newLeft = head[3] === undefined ? 1 : Number(head[3]);
      hunks.push(hunk);
      continue;
    }
    if (!hunk || (oldLeft === 0 && newLeft === 0)) continue;
    const sign = line === '' ? ' ' : line[0];
    if (sign === '\\') continue; // "\ No newline at end of file"
    if (sign === '+' && newLeft > 0) newLeft -= 1;
    else if (sign === '-' && oldLeft > 0) oldLeft -= 1;
    else if (sign === ' ' && oldLeft > 0 && newLeft > 0) {
      oldLeft -= 1;
      newLeft -= 1;
    } else return undefined;
    hunk.lines.push(line === '' ? ' ' : line);
  }
  return hunks.length === 0 ? undefined : hunks;
}

/** A reject's reason, or why it cannot be sent. */
export function rejectWithReason(typed: string | undefined): AskResult | { error: string } {
  const message = (typed ?? '').trim();
  if (!message) return { error: l10n.t('Type a reason, or pick Reject.') };
  return { outcome: 'rejected', message };
}

// ---------------------------------------------------------------------------
// Forms

/** A field's name as a step shows it: required fields are marked. */
export function fieldLabel(field: FormField): string {
  return field.required ? `${field.title} *` : l10n.t('{0} (optional)', field.title);
}

/** What a field takes, in words: shown under the input. */
export function fieldHint(field: FormField): string {
  const hints: string[] = [];
  switch (field.type) {
    case 'text': {
      const { minLength: min, maxLength: max } = field;
      if (min !== undefined && max !== undefined) hints.push(l10n.t('{0} to {1} characters', min, max));
      else if (min !== undefined) hints.push(l10n.t('at least {0} characters', min));
      else if (max !== undefined) hints.push(l10n.t('at most {0} characters', max));
      if (field.format) hints.push(formatName(field.format));
      if (field.pattern) hints.push(l10n.t('matching {0}', field.pattern));
      break;
    }
    case 'number':
    case 'integer': {
      hints.push(field.type === 'integer' ? l10n.t('a whole number') : l10n.t('a number'));
      if (field.minimum !== undefined && field.maximum !== undefined) hints.push(l10n.t('from {0} to {1}', field.minimum, field.maximum));
      else if (field.minimum !== undefined) hints.push(l10n.t('at least {0}', field.minimum));
      else if (field.maximum !== undefined) hints.push(l10n.t('at most {0}', field.maximum));
      break;
    }
    case 'multi': {
      const { minItems: min, maxItems: max } = field;
      if (min !== undefined && max !== undefined) hints.push(min === max ? l10n.t('pick {0}', min) : l10n.t('pick {0} to {1}', min, max));
      else if (min !== undefined) hints.push(l10n.t('pick at least {0}', min));
      else if (max !== undefined) hints.push(l10n.t('pick at most {0}', max));
      else hints.push(l10n.t('pick any'));
      break;
    }
  }
  return hints.join(l10n.t(', '));
}

function formatName(format: TextFormat): string {
  switch (format) {
    case 'email':
      return l10n.t('an email address');
    case 'uri':
      return l10n.t('a URI (scheme:…)');
    case 'date':
      return l10n.t('a date (YYYY-MM-DD)');
    case 'date-time':
      return l10n.t('a date and time (YYYY-MM-DDTHH:MM:SSZ)');
  }
}

/** The InputBox's starting text: the default, if the field has one. */
export function initialText(field: FormField, current: FieldValue | undefined): string {
  const value = current ?? field.default;
  return value === undefined || Array.isArray(value) ? '' : String(value);
}

/**
 * A typed field's value, or the message the InputBox shows (the same rules
 * ask-lsp applies; it checks again). `undefined` value: an optional field
 * left empty (left out of the answer).
 */
export function parseTyped(field: FormField, typed: string): { value: FieldValue | undefined } | { error: string } {
  const text = typed.trim();
  if (!text) return field.required ? { error: l10n.t('{0} is required', field.title) } : { value: undefined };
  if (field.type === 'number' || field.type === 'integer') {
    const n = Number(text);
    if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text) || !Number.isFinite(n)) return { error: l10n.t('Type a number') };
    if (field.type === 'integer' && !Number.isSafeInteger(n)) return { error: l10n.t('Type a whole number') };
    if (field.minimum !== undefined && n < field.minimum) return { error: l10n.t('At least {0}', field.minimum) };
    if (field.maximum !== undefined && n > field.maximum) return { error: l10n.t('At most {0}', field.maximum) };
    return { value: n };
  }
  const length = [...text].length;
  if (field.minLength !== undefined && length < field.minLength) {
    return { error: l10n.t('At least {0} characters ({1} now)', field.minLength, length) };
  }
  if (field.maxLength !== undefined && length > field.maxLength) {
    return { error: l10n.t('At most {0} characters ({1} now)', field.maxLength, length) };
  }
  if (field.format && !formatOk(field.format, text)) return { error: l10n.t('Not {0}', formatName(field.format)) };
  if (field.pattern && !matches(field.pattern, text)) return { error: l10n.t('Does not match {0}', field.pattern) };
  return { value: text };
}

/** Unanchored, as JSON Schema; a pattern JavaScript cannot read is left to ask-lsp. */
function matches(pattern: string, text: string): boolean {
  try {
    return new RegExp(pattern, 'u').test(text);
  } catch {
    return true;
  }
}

function formatOk(format: TextFormat, text: string): boolean {
  switch (format) {
    case 'email': {
      const at = text.lastIndexOf('@');
      const domain = text.slice(at + 1);
      return at > 0 && !/\s/.test(text) && domain.includes('.') && !domain.startsWith('.') && !domain.endsWith('.');
    }
    case 'uri':
      return /^[A-Za-z][A-Za-z0-9+.-]*:[^\s\p{Cc}]+$/u.test(text);
    case 'date':
      return dateOk(text);
    case 'date-time': {
      const [date, time] = text.split(/[Tt]/, 2);
      return time !== undefined && dateOk(date)
        && /^([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)$/.test(time);
    }
  }
}

function dateOk(text: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return false;
  const [y, month, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const days = new Date(Date.UTC(y, month, 0)).getUTCDate();
  return month >= 1 && month <= 12 && d >= 1 && d <= days;
}

/** One row of a pick-type field (boolean, choice, multi). */
export interface FieldItem {
  label: string;
  description?: string;
  /** `undefined`: leave the field out (optional fields). */
  value: string | boolean | undefined;
  picked: boolean;
}

export function fieldItems(field: FormField, current: FieldValue | undefined): FieldItem[] {
  const chosen = current ?? field.default;
  const isDefault = (value: string | boolean) => (field.default === value ? l10n.t('default') : undefined);
  const items: FieldItem[] = field.type === 'boolean'
    ? [true, false].map((value) => ({ label: yesNo(value), value, description: isDefault(value), picked: chosen === value }))
    : (field.options ?? []).map((o) => ({
      label: o.label,
      value: o.value,
      description: [
        o.description,
        field.type === 'multi'
          ? (Array.isArray(field.default) && field.default.includes(o.value) ? l10n.t('default') : undefined)
          : isDefault(o.value),
      ].filter(Boolean).join(' · ') || undefined,
      picked: Array.isArray(chosen) ? chosen.includes(o.value) : chosen === o.value,
    }));
  if (!field.required && field.type !== 'multi') {
    items.push({ label: l10n.t('Leave empty'), value: undefined, description: l10n.t('optional: not answered'), picked: false });
  }
  return items;
}

/** A pick-type field's value from the rows picked, or what is wrong. */
export function pickedValue(field: FormField, picked: FieldItem[]): { value: FieldValue | undefined } | { error: string } {
  if (field.type !== 'multi') {
    if (picked.length !== 1) return { error: l10n.t('Pick one') };
    return { value: picked[0].value };
  }
  const values = picked.map((i) => i.value as string);
  if (field.minItems !== undefined && values.length < field.minItems) return { error: l10n.t('Pick at least {0}', field.minItems) };
  if (field.maxItems !== undefined && values.length > field.maxItems) return { error: l10n.t('Pick at most {0}', field.maxItems) };
  if (values.length === 0 && !field.required) return { value: undefined };
  return { value: values };
}

/** The form's answer: each field's value by id, fields left empty left out. */
export function formAnswer(form: Form, values: Array<FieldValue | undefined>): AskResult {
  const out: Record<string, FieldValue> = {};
  form.fields.forEach((field, i) => {
    if (values[i] !== undefined) out[field.id] = values[i]!;
  });
  return { outcome: 'answered', values: out };
}

/** A value as the review step shows it: option labels, Yes/No, the text as typed. */
export function shownValue(field: FormField, value: FieldValue | undefined): string {
  if (value === undefined) return l10n.t('(empty)');
  const label = (v: string) => field.options?.find((o) => o.value === v)?.label ?? v;
  if (Array.isArray(value)) return value.length ? value.map(label).join(l10n.t(', ')) : l10n.t('(none)');
  if (typeof value === 'boolean') return yesNo(value);
  if (field.type === 'choice') return label(String(value));
  return String(value);
}

function yesNo(value: boolean): string {
  return value ? l10n.t('Yes') : l10n.t('No');
}

/** A link: consenting is `values: {}` (ask-lsp never opens it). */

export const LINK_CONSENT: AskResult = { outcome: 'answered', values: {} };

// ---------------------------------------------------------------------------
// Hooks

/**
 * The settings that make Claude Code ('claude': ~/.claude/settings.json),
 * Codex ('codex': ~/.codex/config.toml), Qwen Code ('qwen':
 * ~/.qwen/settings.json) or Copilot CLI ('copilot':
 * ~/.copilot/hooks/ask-lsp.json) send their permission prompts to
 * ask-lsp, with the binary's full path: the extension's ask-lsp is not on
 * $PATH, so the bare `ask-lsp hook claude` would fail with "not found" (and
 * the agent would silently ask in its own terminal).
 */
export function hookSnippet(agent: 'claude' | 'codex' | 'qwen' | 'copilot', binary: string): { file: string; text: string } {
  // The agents run the command with a shell: quoted unless plainly safe.
  const quoted = /^[\w/.:+-]+$/.test(binary) ? binary : `'${binary.replace(/'/g, `'\\''`)}'`;
  // A JSON string is a valid TOML basic string for these characters.
  const command = JSON.stringify(`${quoted} hook ${agent}`);
  if (agent === 'claude' || agent === 'qwen') {
    return {
      file: agent === 'claude' ? '~/.claude/settings.json' : '~/.qwen/settings.json',
      text: `{ "hooks": { "PermissionRequest": [\n    { "matcher": "*",\n      "hooks": [{ "type": "command", "command": ${command}, "timeout": 60 }] } ] } }\n`,
    };
  }
  if (agent === 'copilot') {
    return {
      file: '~/.copilot/hooks/ask-lsp.json',
      text: `{ "version": 1,\n  "hooks": { "permissionRequest": [\n    { "type": "command", "bash": ${command}, "timeoutSec": 60 } ] } }\n`,
    };
  }
  return {
    file: '~/.codex/config.toml',
    text: `[[hooks.PermissionRequest]]\nmatcher = "*"\n[[hooks.PermissionRequest.hooks]]\ntype = "command"\ncommand = ${command}\ntimeout = 60\n`,
  };
}
