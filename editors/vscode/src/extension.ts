// ask-lsp for VS Code: starts the ask-lsp language server, opts into its
// askQuestions extension and shows each prompt natively: questions here,
// permissions and forms in prompts.ts.
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import {
  CancellationToken,
  ClientCapabilities,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  StaticFeature,
} from 'vscode-languageclient/node';
import * as l10n from './l10n';
import { Item, answerFrom, hookSnippet, itemsFor, presentation, statusText, stepTitle, toServerConfig, waitingMessage } from './logic';
import { RequestDocuments, askForm, askPermission } from './prompts';
import * as proto from './protocol';
import { AskParams, AskResult, QuestionInfo, requestTitle } from './protocol';

let client: LanguageClient | undefined;
let status: vscode.StatusBarItem;
/** The person chose Later on the last prompt: announce the next one first. */
let laterChosen = false;
const documents = new RequestDocuments();

/** Opts into askQuestions, with the prompt kinds shown here, in `initialize`. */
class AskQuestionsFeature implements StaticFeature {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    capabilities.experimental = { ...capabilities.experimental, askQuestions: proto.CAPABILITY };
  }
  initialize(): void {}
  getState() {
    return { kind: 'static' as const };
  }
  clear(): void {}
}

function settings() {
  const c = vscode.workspace.getConfiguration('askLsp');
  return toServerConfig({
    servers: c.get('servers'),
    directory: c.get('directory'),
    surface: c.get('surface'),
    policy: c.get('policy'),
    notify: c.get('notify'),
    locale: c.get('locale'),
    codexHomes: c.get('codexHomes'),
  });
}

/**
 * The extension's words: VS Code's (`vscode.l10n`, its display language)
 * unless `askLsp.locale` names a language, whose catalogue is read here
 * (`vscode.l10n` cannot switch language while VS Code runs).
 */
function useLocale(context: vscode.ExtensionContext) {
  const setting = vscode.workspace.getConfiguration('askLsp').get<string>('locale')?.trim();
  if (!setting) {
    l10n.useTranslations((message, args) => vscode.l10n.t(message, ...args));
    return;
  }
  const locale = l10n.chooseLocale(setting, vscode.env.language);
  if (locale === 'en') {
    l10n.useTranslations(l10n.format);
    return;
  }
  const file = path.join(context.extensionPath, 'l10n', l10n.BUNDLES[locale]);
  try {
    l10n.useTranslations(l10n.fromBundle(JSON.parse(fs.readFileSync(file, 'utf8'))));
  } catch (error) {
    l10n.useTranslations(l10n.format);
    console.error(`ask-lsp: cannot read ${file}: ${error}`);
  }
}

/** The setting, else the binary bundled in the extension, else $PATH. */
function binary(context: vscode.ExtensionContext): string {
  const configured = vscode.workspace.getConfiguration('askLsp').get<string>('path');
  if (configured) return configured;
  const bundled = path.join(context.extensionPath, 'bin', process.platform === 'win32' ? 'ask-lsp.exe' : 'ask-lsp');
  return fs.existsSync(bundled) ? bundled : 'ask-lsp';
}

type Step = { answer: string[] } | { outcome: 'rejected' | 'deferred' | 'cancelled' };

// Tooltips are read when a prompt shows, in the language chosen by then.
const REJECT: vscode.QuickInputButton = {
  iconPath: new vscode.ThemeIcon('circle-slash'),
  get tooltip() {
    return l10n.t('Reject the question (the agent stops this turn)');
  },
};
const LATER: vscode.QuickInputButton = {
  iconPath: new vscode.ThemeIcon('clock'),
  get tooltip() {
    return l10n.t('Later: keep it pending (status bar reopens it)');
  },
};

type PickItem = vscode.QuickPickItem & { item: Item };

/** One question as a QuickPick; resolves when the person decides or the request is withdrawn. */
function askOne(question: QuestionInfo, index: number, total: number, token: CancellationToken): Promise<Step> {
  return new Promise((resolve) => {
    const pick = vscode.window.createQuickPick<PickItem>();
    pick.title = stepTitle(question);
    pick.placeholder = question.question.replace(/\s*\n\s*/g, ' ');
    pick.step = total > 1 ? index + 1 : undefined;
    pick.totalSteps = total > 1 ? total : undefined;
    pick.canSelectMany = question.multiple;
    pick.ignoreFocusOut = true;
    pick.matchOnDescription = true;
    pick.buttons = [LATER, REJECT];
    pick.items = itemsFor(question).map((item) => ({ label: item.label, description: item.description, item }));
    let settled = false;
    const finish = (step: Step) => {
      if (settled) return;
      settled = true;
      subscription.dispose();
      pick.dispose();
      resolve(step);
    };
    // Answered elsewhere: ask-lsp cancels the request; close the prompt.
    const subscription = token.onCancellationRequested(() => finish({ outcome: 'cancelled' }));
    pick.onDidTriggerButton((button) => finish({ outcome: button === REJECT ? 'rejected' : 'deferred' }));
    // Esc rejects, as in OpenCode's own prompt.
    pick.onDidHide(() => finish({ outcome: 'rejected' }));
    pick.onDidAccept(async () => {
      const picked = (question.multiple ? pick.selectedItems : pick.activeItems.slice(0, 1)).map((p) => p.item);
      let typed: string | undefined;
      if (picked.some((i) => i.kind === 'other')) {
        settled = true; // the InputBox takes over; hiding the pick is not a rejection
        pick.hide();
        typed = await vscode.window.showInputBox({
          title: pick.title,
          prompt: question.question,
          ignoreFocusOut: true,
          // A secret is typed masked (docs/protocol.md, `secret`).
          password: question.secret === true,
        }, token);
        settled = false;
        if (token.isCancellationRequested) return finish({ outcome: 'cancelled' });
        if (typed === undefined) return finish({ outcome: 'deferred' });
      }
      const result = answerFrom(question, picked, typed);
      if ('error' in result) {
        void vscode.window.showWarningMessage(`ask-lsp: ${result.error}`);
        pick.show();
        return;
      }
      finish(result);
    });
    pick.show();
  });
}

async function askQuestions(params: AskParams, token: CancellationToken): Promise<AskResult> {
  const questions = params.questions ?? [];
  const answers: string[][] = [];
  for (const [index, question] of questions.entries()) {
    const step = await askOne(question, index, questions.length, token);
    if ('answer' in step) {
      answers.push(step.answer);
      continue;
    }
    // A cancelled request's response is ignored; deferred keeps it pending.
    return { outcome: step.outcome === 'rejected' ? 'rejected' : 'deferred' };
  }
  return { outcome: 'answered', answers };
}

/** Answer / Later, or the request withdrawn while the notification shows. */
async function announce(params: AskParams, token: CancellationToken): Promise<'answer' | 'later'> {
  const cancelled = new Promise<'later'>((resolve) => token.onCancellationRequested(() => resolve('later')));
  const answer = l10n.t('Answer');
  const choice = vscode.window.showInformationMessage(waitingMessage(params), answer, l10n.t('Later'))
    .then((picked) => (picked === answer ? 'answer' as const : 'later' as const));
  return Promise.race([choice, cancelled]);
}

async function ask(params: AskParams, token: CancellationToken): Promise<AskResult> {
  if (presentation({ focused: vscode.window.state.focused, laterChosen }) === 'notification') {
    if ((await announce(params, token)) === 'later' || token.isCancellationRequested) {
      laterChosen = true;
      return { outcome: 'deferred' };
    }
  }
  laterChosen = false;
  const result = await present(params, token);
  laterChosen = result.outcome === 'deferred' && !token.isCancellationRequested;
  return result;
}

function present(params: AskParams, token: CancellationToken): Promise<AskResult> {
  switch (params.kind) {
    case 'permission':
      return askPermission(params, token, documents);
    case 'form':
      return askForm(params, token);
    default:
      return askQuestions(params, token);
  }
}

async function start(context: vscode.ExtensionContext) {
  const serverOptions: ServerOptions = { command: binary(context), args: [] };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [],
    initializationOptions: settings(),
    outputChannelName: 'ask-lsp',
  };
  client = new LanguageClient('askLsp', 'ask-lsp', serverOptions, clientOptions);
  client.registerFeature(new AskQuestionsFeature());
  client.onRequest(proto.ask, (params: AskParams, token: CancellationToken) => ask(params, token));
  client.onNotification(proto.resolved, (params: proto.ResolvedParams) => {
    documents.forget(params.key);
    showPending(params.pending);
    if (!proto.resolvedHere(params)) {
      vscode.window.showInformationMessage(`ask-lsp: ${params.message}`);
    }
  });
  client.onNotification(proto.status, (params: proto.StatusParams) => showPending(params.pending));
  await client.start();
}

function showPending(pending: number) {
  status.text = statusText(pending);
  status.tooltip = pending === 1
    ? l10n.t('1 agent prompt waiting: click to answer')
    : l10n.t('{0} agent prompts waiting: click to answer', pending);
  if (pending > 0) status.show();
  else status.hide();
}

async function pendingPick(placeHolder: string): Promise<AskParams | undefined> {
  const list = ((await client?.sendRequest('workspace/executeCommand', { command: proto.commands.list })) ?? []) as AskParams[];
  if (list.length === 0) {
    vscode.window.showInformationMessage(l10n.t('ask-lsp: nothing pending'));
    return undefined;
  }
  if (list.length === 1) return list[0];
  const choice = await vscode.window.showQuickPick(
    list.map((p) => ({ label: requestTitle(p), description: `${p.server} · ${p.sessionID}`, p })),
    { placeHolder },
  );
  return choice?.p;
}

/** The person asked for it: present it as a QuickPick straight away. */
async function show(p: AskParams) {
  laterChosen = false;
  await client?.sendRequest('workspace/executeCommand', { command: proto.commands.show, arguments: [p.key] });
}

/**
 * The workbench builds its QuickPick widget when an extension's first
 * QuickPick reaches it; the first prompt paid for that. Hiding a QuickPick
 * that was never shown sends it there (`visible: false`): the widget is
 * built, hidden, with nothing shown and focus untouched (hiding a QuickPick
 * that is not visible does nothing, whatever else is open).
 */
function buildQuickInputWidget() {
  const pick = vscode.window.createQuickPick();
  pick.hide();
  pick.dispose();
}

export async function activate(context: vscode.ExtensionContext) {
  useLocale(context);
  buildQuickInputWidget();
  status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 100);

  status.command = 'askLsp.answerPending';
  context.subscriptions.push(
    status,
    vscode.workspace.registerTextDocumentContentProvider(RequestDocuments.scheme, documents),
    vscode.commands.registerCommand('askLsp.answerPending', async () => {
      const p = await pendingPick(l10n.t('Which prompt?'));
      if (p) await show(p);
    }),
    vscode.commands.registerCommand('askLsp.listPending', async () => {
      const p = await pendingPick(l10n.t('Pending prompts (pick one to answer)'));
      if (p) await show(p);
    }),
    vscode.commands.registerCommand('askLsp.rejectPending', async () => {
      const p = await pendingPick(l10n.t('Reject which prompt?'));
      if (p) await client?.sendRequest('workspace/executeCommand', { command: proto.commands.reject, arguments: [p.key] });
    }),
    vscode.commands.registerCommand('askLsp.hookSnippet', async () => {
      const agent = await vscode.window.showQuickPick([{ label: 'Claude Code', agent: 'claude' as const }, { label: 'Codex', agent: 'codex' as const },
        { label: 'Qwen Code', agent: 'qwen' as const }, { label: 'GitHub Copilot CLI', agent: 'copilot' as const }],
        { placeHolder: l10n.t('Hook settings for which agent?') });
      if (!agent) return;
      // The binary the extension runs (bundled, configured, else on $PATH).
      const snippet = hookSnippet(agent.agent, binary(context));
      await vscode.env.clipboard.writeText(snippet.text);
      const document = await vscode.workspace.openTextDocument({ content: snippet.text, language: agent.agent === 'codex' ? 'toml' : 'json' });
      await vscode.window.showTextDocument(document, { preview: true });
      void vscode.window.showInformationMessage(l10n.t('Copied: the hook settings for {0}, with the full path of this extension\'s ask-lsp (it is not on $PATH).', snippet.file));
    }),
    vscode.commands.registerCommand('askLsp.restart', async () => {
      await client?.stop();
      await start(context);
    }),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (!event.affectsConfiguration('askLsp')) return;
      if (event.affectsConfiguration('askLsp.locale')) useLocale(context);
      if (event.affectsConfiguration('askLsp.path')) {
        await client?.stop();
        await start(context);
      } else {
        await client?.sendNotification('workspace/didChangeConfiguration', { settings: settings() });
      }
    }),
  );
  await start(context);
}

export async function deactivate() {
  await client?.stop();
}
