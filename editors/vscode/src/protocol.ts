// The askQuestions LSP extension as ask-lsp defines it (docs/protocol.md),
// mirrored in this one file: method and command names, and the shapes they
// carry. Nothing else in the extension spells a method name.

/** The extension version this client speaks (sent in `initialize`). */
export const VERSION = 2;

/** Server → client request: show a question request; answered with `AskResult`. */
export const ask = 'askQuestions/ask';
/** Server → client notification: a request left the pending set. */
export const resolved = 'askQuestions/resolved';
/** Server → client notification: servers, connection state, pending count. */
export const status = 'askQuestions/status';

/** `workspace/executeCommand` commands ask-lsp provides. */
export const commands = {
  list: 'askLsp.list',
  answer: 'askLsp.answer',
  reject: 'askLsp.reject',
  show: 'askLsp.show',
  status: 'askLsp.status',
} as const;

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

/** What asked: the agent's tool call and the agent's name, when known. */
export interface Origin {
  toolCallID?: string;
  agent?: string;
}

export interface AskParams {
  key: string;
  server: string;
  requestID: string;
  sessionID: string;
  /** Version 2; only `questions` exists so far. */
  kind?: 'questions';
  /** Version 2: the display title ask-lsp computed. */
  title?: string;
  /** Version 2, replacing version 1's `tool`. */
  origin?: Origin | null;
  questions: QuestionInfo[];
  timeoutMs: number | null;
  pending: number;
}

export type AskResult =
  | { outcome: 'answered'; answers: string[][] }
  | { outcome: 'rejected' }
  | { outcome: 'deferred' };

export interface ResolvedParams {
  key: string;
  state: 'replied' | 'rejected' | 'dismissed';
  reason: string;
  message: string;
  pending: number;
  /** Version 2: answered or rejected through this client. */
  here?: boolean;
}

export interface ServerStatus {
  name: string;
  url: string;
  connected: boolean;
  error?: string | null;
}

export interface StatusParams {
  pending: number;
  servers: ServerStatus[];
}

/**
 * A request's display title: version 2 servers send it; for version 1, the
 * same rule (first question's header, else its text, cut to 80 characters,
 * " (+N more)" when there are several).
 */
export function requestTitle(params: AskParams): string {
  if (params.title) return params.title;
  const first = params.questions[0];
  let name = first.header || first.question;
  if ([...name].length > 80) name = [...name].slice(0, 79).join('') + '…';
  const more = params.questions.length > 1 ? ` (+${params.questions.length - 1} more)` : '';
  return name + more;
}

/** Resolved through this client? Version 1 servers only give the reason. */
export function resolvedHere(params: ResolvedParams): boolean {
  return params.here ?? ['answeredHere', 'rejectedHere'].includes(params.reason);
}
