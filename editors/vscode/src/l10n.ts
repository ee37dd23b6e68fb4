// The extension's own words in the person's language, kept free of `vscode`
// so logic.ts (and node's tests) can use them. `t` takes the English text as
// the key, as `vscode.l10n.t` does; extension.ts decides who translates:
// VS Code (its display language) unless `askLsp.locale` names a language.

/** The languages with a catalogue: English is the source and the fallback. */
export type Locale = 'en' | 'zh-CN';

/** The catalogue file for each language but English (in l10n/). */
export const BUNDLES: Record<Exclude<Locale, 'en'>, string> = { 'zh-CN': 'bundle.l10n.zh-cn.json' };

/**
 * A language tag as a catalogue: case and `_`/`-` do not matter, an
 * `.encoding` or `@modifier` is dropped; Simplified Chinese tags are zh-CN,
 * everything else (Traditional Chinese included: no catalogue yet) is English.
 */
export function resolveLocale(tag: string): Locale {
  const normal = tag.trim().toLowerCase().replace(/_/g, '-').replace(/[.@].*$/, '');
  return ['zh', 'zh-cn', 'zh-sg', 'zh-hans'].includes(normal) || normal.startsWith('zh-hans-') ? 'zh-CN' : 'en';
}

/** The `askLsp.locale` setting, else VS Code's display language. */
export function chooseLocale(setting: string | undefined, displayLanguage: string): Locale {
  return resolveLocale(setting?.trim() || displayLanguage);
}

export type Args = Array<string | number>;
type Translate = (message: string, args: Args) => string;

/** `{0}`, `{1}`… replaced by the arguments, as `vscode.l10n.t` does. */
export function format(message: string, args: Args): string {
  return message.replace(/\{(\d+)\}/g, (whole, index: string) => (Number(index) < args.length ? String(args[Number(index)]) : whole));
}

/** Translates with a catalogue (English text → translation); English where it has none. */
export function fromBundle(bundle: Record<string, string>): Translate {
  return (message, args) => format(Object.hasOwn(bundle, message) ? bundle[message] : message, args);
}

let translate: Translate = format;

/** Who translates from now on. */
export function useTranslations(next: Translate): void {
  translate = next;
}

/** `message` (English, `{0}` placeholders) in the person's language. */
export function t(message: string, ...args: Args): string {
  return translate(message, args);
}
