// Permissions and forms, shown with VS Code's QuickPick and InputBox. What
// the rows say and what an answer becomes is in logic.ts; this file only
// wires them to VS Code. Every prompt closes when ask-lsp cancels the
// request (answered elsewhere, session ended), and a stray Esc never
// decides anything: it keeps the prompt pending (Later).
import * as path from 'node:path';
import * as vscode from 'vscode';
import { CancellationToken } from 'vscode-languageclient/node';
import {
  FieldItem, LINK_CONSENT, PermissionRow, applyDiff, diffHunks, editTarget, fieldHint, fieldItems, fieldLabel, formAnswer, initialText, parseTyped,
  permissionDocument, permissionRows, permissionTitle, pickedValue, rejectWithReason, shownValue, whereFrom, wrapRows,
} from './logic';
import { readEditFile, refusalNote } from './files';
import * as l10n from './l10n';
import { AskParams, AskResult, FieldValue, requestTitle } from './protocol';

// Tooltips are read when a prompt shows, in the language chosen by then.
const LATER: vscode.QuickInputButton = {
  iconPath: new vscode.ThemeIcon('clock'),
  get tooltip() {
    return l10n.t('Later: keep it pending (status bar reopens it)');
  },
};
const DECLINE: vscode.QuickInputButton = {
  iconPath: new vscode.ThemeIcon('circle-slash'),
  get tooltip() {
    return l10n.t('Decline (the agent is told you declined)');
  },
};
const DIFF: vscode.QuickInputButton = {
  iconPath: new vscode.ThemeIcon('diff'),
  get tooltip() {
    return l10n.t('Show the diff');
  },
};

/** Read-only documents (`ask-lsp:` URIs) with a request's whole text or diff. */
export class RequestDocuments implements vscode.TextDocumentContentProvider {
  static readonly scheme = 'ask-lsp';
  private texts = new Map<string, string>();

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.path) ?? l10n.t('(this request is no longer pending)');
  }

  /** Opens `name` (its extension picks the language) beside the editor, keeping focus on the prompt. */
  async open(key: string, name: string, text: string): Promise<void> {
    const uri = vscode.Uri.from({ scheme: RequestDocuments.scheme, path: `/${key}/${name}` });
    this.texts.set(uri.path, text);
    const document = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(document, { preview: true, preserveFocus: true, viewColumn: vscode.ViewColumn.Beside });
  }

  /**
   * An edit beside the file it changes: `vscode.diff` between the file as it
   * is now and the proposed version (the file with the edit's diff applied),
   * both read-only documents of this provider filled from one bounded read
   * (files.ts: only a regular file inside the workspace or the request's
   * directory, resolved through links, read once the diff parses). False
   * when there is no such file or the diff does not apply to it as it is
   * now; the person is told why when the file was not opened.
   */
  async openEdit(params: AskParams): Promise<boolean> {
    const target = editTarget(params);
    const diff = params.permission?.diff;
    if (!target || !diff || !diffHunks(diff) || !path.isAbsolute(target)) return false;
    const roots = [...(vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath), params.source?.directory];
    const file = readEditFile(target, roots, (resolved) =>
      // The open document if there is one (unsaved changes included).
      vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'file' && d.uri.fsPath === resolved)?.getText());
    if (file.kind === 'refused') {
      void vscode.window.showWarningMessage(refusalNote(file));
      return false;
    }
    const proposed = applyDiff(file.text, diff);
    if ('error' in proposed) return false;
    const name = path.basename(file.resolved);
    const now = vscode.Uri.from({ scheme: RequestDocuments.scheme, path: `/${params.key}/now/${name}` });
    const uri = vscode.Uri.from({ scheme: RequestDocuments.scheme, path: `/${params.key}/proposed/${name}` });
    this.texts.set(now.path, file.text);
    this.texts.set(uri.path, proposed.text);
    await vscode.commands.executeCommand('vscode.diff', now, uri, l10n.t('{0}: now ↔ proposed (ask-lsp)', name),
      { preview: true, preserveFocus: true, viewColumn: vscode.ViewColumn.Beside });
    return true;
  }

  /** The request left the pending set: its texts are not kept. */
  forget(key: string): void {
    for (const path of this.texts.keys()) {
      if (path.startsWith(`/${key}/`)) this.texts.delete(path);
    }
  }
}

type PermissionItem = vscode.QuickPickItem & { row: PermissionRow };

/** A permission: the whole request in rows, then the choices. */
export function askPermission(params: AskParams, token: CancellationToken, documents: RequestDocuments): Promise<AskResult> {
  const permission = params.permission!;
  // The file beside the proposed version; the diff itself when that cannot be.
  const openDiff = async () => {
    if (!(await documents.openEdit(params))) await documents.open(params.key, 'changes.diff', permission.diff ?? '');
  };
  const openDetails = () => documents.open(params.key, 'request.txt', permissionDocument(params));
  return new Promise((resolve) => {
    const pick = vscode.window.createQuickPick<PermissionItem>();
    pick.title = permissionTitle(params);
    pick.placeholder = l10n.t('Read the request, then pick a decision below (Esc: later)');
    pick.ignoreFocusOut = true;
    pick.matchOnDescription = true;
    pick.buttons = permission.diff ? [DIFF, LATER] : [LATER];
    pick.items = permissionRows(params).map((row) => row.kind === 'separator'
      ? { label: row.label, kind: vscode.QuickPickItemKind.Separator, row }
      : { label: row.label, description: row.description, row });
    let settled = false;
    let busy = false; // the reason InputBox is up: hiding the pick is not Later
    const finish = (result: AskResult) => {
      if (settled) return;
      settled = true;
      subscription.dispose();
      pick.dispose();
      resolve(result);
    };
    const subscription = token.onCancellationRequested(() => finish({ outcome: 'deferred' }));
    pick.onDidTriggerButton((button) => {
      if (button === DIFF) void openDiff();
      else finish({ outcome: 'deferred' });
    });
    pick.onDidHide(() => {
      if (!busy) finish({ outcome: 'deferred' });
    });
    pick.onDidAccept(async () => {
      const row = pick.activeItems[0]?.row;
      if (!row) return;
      switch (row.kind) {
        case 'choice':
          return finish({ outcome: 'answered', choice: row.choice.id });
        case 'diff':
          return void openDiff();
        case 'details':
        case 'info':
          return void openDetails();
        case 'reason': {
          busy = true;
          pick.hide();
          const typed = await vscode.window.showInputBox({
            title: pick.title,
            prompt: l10n.t('Why not? The agent reads this and goes on without running it.'),
            ignoreFocusOut: true,
            validateInput: (text) => {
              const result = rejectWithReason(text);
              return 'error' in result ? result.error : undefined;
            },
          }, token);
          busy = false;
          if (token.isCancellationRequested) return finish({ outcome: 'deferred' });
          const result = rejectWithReason(typed);
          if ('error' in result) return pick.show(); // Esc: back to the choices
          return finish(result);
        }
      }
    });
    pick.show();
  });
}

/** One step's outcome. */
type Step<T> = { value: T } | { go: 'back' | 'later' | 'decline' | 'cancelled' };

/** Wires a QuickInput to the request: closes on cancellation, Esc is Later. */
function step<T>(
  input: vscode.QuickInput,
  token: CancellationToken,
  wire: (finish: (step: Step<T>) => void) => void,
): Promise<Step<T>> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: Step<T>) => {
      if (settled) return;
      settled = true;
      subscription.dispose();
      input.dispose();
      resolve(result);
    };
    const subscription = token.onCancellationRequested(() => finish({ go: 'cancelled' }));
    input.onDidHide(() => finish({ go: 'later' }));
    wire(finish);
    input.show();
  });
}

function stepButtons(index: number): vscode.QuickInputButton[] {
  return index > 0 ? [vscode.QuickInputButtons.Back, LATER, DECLINE] : [LATER, DECLINE];
}

function onButtons<T>(input: vscode.QuickPick<vscode.QuickPickItem> | vscode.InputBox, finish: (s: Step<T>) => void) {
  input.onDidTriggerButton((button) => {
    if (button === vscode.QuickInputButtons.Back) finish({ go: 'back' });
    else if (button === DECLINE) finish({ go: 'decline' });
    else finish({ go: 'later' });
  });
}

type FieldPickItem = vscode.QuickPickItem & { item: FieldItem };

type ReviewItem = vscode.QuickPickItem & { field?: number; send?: true };

/**
 * The review before a form of several fields is sent (ACP's elicitation
 * spec: clients let people review and change what they send): every field
 * with its value; picking one goes back to it, "Send" sends.
 */
function review(params: AskParams, values: Array<FieldValue | undefined>, token: CancellationToken): Promise<Step<number | 'send'>> {
  const form = params.form!;
  const pick = vscode.window.createQuickPick<ReviewItem>();
  pick.title = l10n.t('{0} — review', requestTitle(params));
  pick.placeholder = l10n.t('Nothing is sent yet: pick a field to change it, or Send');
  pick.ignoreFocusOut = true;
  pick.buttons = [vscode.QuickInputButtons.Back, LATER, DECLINE];
  pick.items = [
    ...form.fields.map((field, i) => ({ label: `${i + 1}. ${field.title}`, description: shownValue(field, values[i]), field: i })),
    { label: '', kind: vscode.QuickPickItemKind.Separator },
    { label: `$(send) ${l10n.t('Send')}`, description: l10n.t('the agent receives these values'), send: true as const },
  ];
  pick.activeItems = pick.items.filter((item) => item.send);
  return step(pick, token, (finish) => {
    onButtons(pick, finish);
    pick.onDidAccept(() => {
      const item = pick.activeItems[0];
      if (item?.send) finish({ value: 'send' });
      else if (item?.field !== undefined) finish({ value: item.field });
    });
  });
}

/** A form: one step per field, Back to revise, a review of several, then the answer. */
export async function askForm(params: AskParams, token: CancellationToken): Promise<AskResult> {
  const form = params.form!;
  if (form.url) return askLink(params, token);
  const values: Array<FieldValue | undefined> = form.fields.map((f) => f.default);
  const title = requestTitle(params);
  // The whole message on the first step when the title had to cut it.
  const message = form.message.replace(/\s*\n\s*/g, ' ');
  const intro = message !== title ? message : '';
  let index = 0;
  // After the first review, a changed field returns to the review.
  let reviewed = false;
  for (;;) {
    if (index >= form.fields.length) {
      if (form.fields.length < 2) break;
      reviewed = true;
      const decided = await review(params, values, token);
      if ('value' in decided) {
        if (decided.value === 'send') break;
        index = decided.value;
        continue;
      }
      if (decided.go === 'back') {
        index = form.fields.length - 1;
        continue;
      }
      return decided.go === 'decline' ? { outcome: 'rejected' } : { outcome: 'deferred' };
    }
    const field = form.fields[index];
    // The field's name in the title: the prompt line below gives way to
    // validation messages.
    const about = [index === 0 ? intro : '', field.description, fieldHint(field)].filter(Boolean).join(' — ');
    const common = (input: vscode.QuickInput) => {
      input.title = `${title} — ${fieldLabel(field)}`;
      input.step = index + 1;
      input.totalSteps = form.fields.length;
      input.ignoreFocusOut = true;
    };
    let result: Step<FieldValue | undefined>;
    if (field.type === 'text' || field.type === 'number' || field.type === 'integer') {
      const box = vscode.window.createInputBox();
      common(box);
      box.buttons = stepButtons(index);
      box.prompt = about || (field.required ? l10n.t('Required') : l10n.t('Optional: leave empty to skip'));
      box.placeholder = field.required ? l10n.t('required') : l10n.t('optional: leave empty to skip');
      box.value = initialText(field, values[index]);
      result = await step(box, token, (finish) => {
        onButtons(box, finish);
        box.onDidChangeValue((text) => {
          const parsed = parseTyped(field, text);
          box.validationMessage = 'error' in parsed && text.trim() ? parsed.error : undefined;
        });
        box.onDidAccept(() => {
          const parsed = parseTyped(field, box.value);
          if ('error' in parsed) box.validationMessage = parsed.error;
          else finish(parsed);
        });
      });
    } else {
      const pick = vscode.window.createQuickPick<FieldPickItem>();
      common(pick);
      pick.buttons = stepButtons(index);
      const placeholder = about || (field.type === 'multi' ? l10n.t('pick any') : l10n.t('pick one'));
      pick.placeholder = placeholder;
      pick.canSelectMany = field.type === 'multi';
      const items = fieldItems(field, values[index]).map((item) => ({ label: item.label, description: item.description, item }));
      pick.items = items;
      if (pick.canSelectMany) pick.selectedItems = items.filter((i) => i.item.picked);
      else pick.activeItems = items.filter((i) => i.item.picked).slice(0, 1);
      result = await step(pick, token, (finish) => {
        onButtons(pick, finish);
        pick.onDidAccept(() => {
          const picked = (pick.canSelectMany ? pick.selectedItems : pick.activeItems.slice(0, 1)).map((p) => p.item);
          const value = pickedValue(field, picked);
          if ('error' in value) pick.placeholder = `⚠ ${value.error} — ${placeholder}`;
          else finish(value);
        });
      });
    }
    if ('value' in result) {
      values[index] = result.value;
      index = reviewed ? form.fields.length : index + 1;
      continue;
    }
    switch (result.go) {
      case 'back':
        index = Math.max(0, index - 1);
        continue;
      case 'decline':
        return { outcome: 'rejected' };
      default:
        return { outcome: 'deferred' };
    }
  }
  return formAnswer(form, values);
}

type LinkItem = vscode.QuickPickItem & { action?: 'open' | 'consent' | 'decline' };

/**
 * A link (url mode): the domain and the whole URL; it is opened only when
 * the person picks "Open", never by itself.
 */
function askLink(params: AskParams, token: CancellationToken): Promise<AskResult> {
  const form = params.form!;
  const link = form.url!;
  const pick = vscode.window.createQuickPick<LinkItem>();
  pick.title = l10n.t('Open a link on {0}? — {1}', link.domain, whereFrom(params));
  pick.placeholder = l10n.t('Read where it goes, then decide (Esc: later)');
  pick.ignoreFocusOut = true;
  pick.buttons = [LATER];
  const rows = (label: string, text: string): LinkItem[] => [
    { label, kind: vscode.QuickPickItemKind.Separator },
    ...wrapRows(text).map((line) => ({ label: line })),
  ];
  pick.items = [
    ...rows(l10n.t('Message'), form.message),
    { label: l10n.t('Domain'), kind: vscode.QuickPickItemKind.Separator },
    { label: `$(globe) ${link.domain}` },
    ...(link.warning ? rows(l10n.t('Check the host'), link.warning) : []),
    ...rows(l10n.t('Full URL'), link.url),
    { label: l10n.t('Decide'), kind: vscode.QuickPickItemKind.Separator },
    { label: l10n.t('Open it in the browser'), description: l10n.t('goes to {0}', link.domain), action: 'open' },
    { label: l10n.t('Copy the URL and open it myself'), description: l10n.t('tells the agent you will'), action: 'consent' },
    { label: l10n.t('Decline'), description: l10n.t('the agent is told you declined'), action: 'decline' },

  ];
  return step<LinkItem['action']>(pick, token, (finish) => {
    pick.onDidTriggerButton(() => finish({ go: 'later' }));
    pick.onDidAccept(() => {
      const action = pick.activeItems[0]?.action;
      if (action) finish({ value: action });
    });
  }).then(async (result) => {
    if (!('value' in result)) return { outcome: 'deferred' as const };
    switch (result.value) {
      case 'open':
        await vscode.env.openExternal(vscode.Uri.parse(link.url, true));
        return LINK_CONSENT;
      case 'consent':
        await vscode.env.clipboard.writeText(link.url);
        return LINK_CONSENT;
      default:
        return { outcome: 'rejected' as const };
    }
  });
}
