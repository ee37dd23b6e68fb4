// The askQuestions LSP extension as ask-lsp defines it (docs/protocol.md),
// mirrored in this one file: method and command names, and the shapes they
// carry. Nothing else in the extension spells a method name.

import * as l10n from './l10n';

/** The extension version this client speaks (sent in `initialize`). */
export const VERSION = 2;
/** Prompt kinds besides questions this client shows natively. */
export const KINDS: PromptKind[] = ['permission', 'form'];
/** What the client sends as `capabilities.experimental.askQuestions`:
 * `secret` says questions marked secret are typed masked here. */
export const CAPABILITY = { version: VERSION, kinds: [...KINDS, 'secret'] };

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
  /** The typed answer is a secret: typed masked, never shown or kept. */
  secret?: boolean;
}

/** What asked: the agent's tool call, the agent's name and the session's title, when known. */
export interface Origin {
  toolCallID?: string | null;
  agent?: string | null;
  sessionTitle?: string | null;
}

export type PromptKind = 'questions' | 'permission' | 'form';

/** Where a prompt comes from. */
export interface Source {
  backend: string;
  url: string;
  directory: string | null;
}

export type Effect = 'allowOnce' | 'allowAlways' | 'rejectOnce' | 'rejectAlways';

export interface PermissionChoice {
  /** What an answer names. */
  id: string;
  label: string;
  effect: Effect;
}

export interface Permission {
  /** The tool: "bash", "edit", an ACP tool kind. */
  action: string;
  title: string;
  /** Commands or paths it names. */
  patterns: string[];
  /** The full command line: shown whole. */
  command: string | null;
  /** A unified diff, for edits. */
  diff: string | null;
  choices: PermissionChoice[];
}

export type FieldType = 'text' | 'number' | 'integer' | 'boolean' | 'choice' | 'multi';
export type TextFormat = 'email' | 'uri' | 'date' | 'date-time';
export type FieldValue = string | number | boolean | string[];

export interface FieldOption {
  /** What the answer carries. */
  value: string;
  /** What the person sees. */
  label: string;
  /** What the agent says about it (absent when it says nothing). */
  description?: string;
}

export interface FormField {
  id: string;
  title: string;
  description: string;
  required: boolean;
  type: FieldType;
  format?: TextFormat;
  /** Unanchored, as in JSON Schema. */
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  options?: FieldOption[];
  minItems?: number;
  maxItems?: number;
  default?: FieldValue;
}

export interface FormLink {
  /** Shown whole; opened only when the person chooses to. */
  url: string;
  /** The host a browser opens (ASCII, `xn--…` for an internationalised name), shown prominently. */
  domain: string;
  /** Why the host deserves a second look (the text names another host, punycode, mixed scripts). */
  warning?: string;
}

export interface Form {
  message: string;
  /** Url mode: then `fields` is []. */
  url: FormLink | null;
  fields: FormField[];
}

export interface AskParams {
  key: string;
  server: string;
  requestID: string;
  sessionID: string;
  /** Version 2; absent means questions. */
  kind?: PromptKind;
  /** Version 2: the display title ask-lsp computed. */
  title?: string;
  /** Version 2. */
  source?: Source;
  /** Version 2, replacing version 1's `tool`. */
  origin?: Origin | null;
  /** Kind "questions" (always there in version 1). */
  questions?: QuestionInfo[];
  /** Kind "permission". */
  permission?: Permission;
  /** Kind "form". */
  form?: Form;
  timeoutMs: number | null;
  pending: number;
}

export type AskResult =
  | { outcome: 'answered'; answers: string[][] }
  | { outcome: 'answered'; choice: string }
  | { outcome: 'answered'; values: Record<string, FieldValue> }
  | { outcome: 'rejected'; message?: string }
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
  const first = params.questions?.[0];
  if (!first) return params.key;
  let name = first.header || first.question;
  if ([...name].length > 80) name = [...name].slice(0, 79).join('') + '…';
  const count = params.questions?.length ?? 0;
  return count > 1 ? l10n.t('{0} (+{1} more)', name, count - 1) : name;

}

/** Resolved through this client? Version 1 servers only give the reason. */
export function resolvedHere(params: ResolvedParams): boolean {
  return params.here ?? ['answeredHere', 'rejectedHere'].includes(params.reason);
}
