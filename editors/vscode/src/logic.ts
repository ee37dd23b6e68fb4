// The extension's logic, kept free of `vscode` so node's test runner can
// check it: the askQuestions/ask shapes, what a person's picks become, and
// the configuration ask-lsp is given.

export interface QuestionOption {
  label: string;
  description: string;
}

export interface QuestionInfo {
  question: string;
  header: string;
  options: QuestionOption[];
  multiple: boolean;
  custom: boolean;
}

export interface AskParams {
  key: string;
  server: string;
  requestID: string;
  sessionID: string;
  questions: QuestionInfo[];
  timeoutMs: number | null;
  pending: number;
}

export type AskResult =
  | { outcome: 'answered'; answers: string[][] }
  | { outcome: 'rejected' }
  | { outcome: 'deferred' };

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

export interface Settings {
  servers?: Array<Record<string, string>>;
  directory?: string;
  policy?: unknown;
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
  if (settings.policy) config.policy = settings.policy;
  return config;
}
