// The extension's logic, kept free of `vscode` so node's test runner can
// check it: what a person's picks become, how a prompt is presented, and
// the configuration ask-lsp is given.

import { AskParams, QuestionInfo, requestTitle } from './protocol';

/** One row of a question's pick list. */
export interface Item {
  kind: 'option' | 'other';
  label: string;
  description?: string;
}

export const OTHER_LABEL = 'Other…';

export function itemsFor(question: QuestionInfo): Item[] {
  const items: Item[] = question.options.map((o) => ({
    kind: 'option' as const,
    label: o.label,
    description: o.description || undefined,
  }));
  if (question.custom) {
    items.push({ kind: 'other', label: OTHER_LABEL, description: 'type an answer' });
  }
  return items;
}

/** A QuickPick's title; VS Code adds the step counter ("(1/2)") itself. */
export function stepTitle(question: QuestionInfo): string {
  return question.header || 'Question';
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
    const text = (typed ?? '').trim();
    if (!text) return { error: 'Type an answer, or pick an option.' };
    answer.push(text);
  }
  if (!question.multiple && answer.length !== 1) {
    return { error: 'Pick one option.' };
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
  const agent = params.origin?.agent ? `, agent ${params.origin.agent}` : '';
  return `ask-lsp: the agent is waiting for you: "${requestTitle(params)}" (${params.server}${agent})`;
}

export interface Settings {
  servers?: Array<Record<string, string>>;
  directory?: string;
  surface?: string;
  policy?: unknown;
  notify?: unknown;
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
  return config;
}
