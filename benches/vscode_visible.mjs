// For scripts/bench (time to a visible prompt): the VS Code extension in
// code-server, driven through Chromium as editors/vscode/test/e2e.test.mjs
// does, following a real OpenCode. In the page, a MutationObserver sees the
// QuickPick of the mock LLM's question (`Which database?`, its `SQLite` row
// rendered) appear in the DOM (`built <ns>`) and takes the time again in
// the frame after (a requestAnimationFrame callback, then a task: the frame
// has been drawn; `shown <ns>`), each as performance.timeOrigin +
// performance.now(), the realtime clock in ms, pushed out of the page and
// appended to $BENCH_OUT as ns; then Escape rejects it (the
// extension's Esc) so the agent's turn ends. `clock <ms>` lines give the
// page clock minus Date.now() at the start and end (its drift from the
// realtime clock over the run); `frame <start ns> <end ns> <script ms>
// <forced style and layout ms>` lines the page's long animation frames.
// Prints `ready` once the workbench is up.
// Env: CODE_SERVER_DIR, CODE_SERVER_NODE, ASK_LSP_VSIX, ASK_LSP_BIN,
// BENCH_OPENCODE_URL, BENCH_OPENCODE_DIR, BENCH_POLICY, BENCH_OUT, BENCH_PROMPTS.
// Ends when stdin closes; a `screenshot` line on stdin saves the page to
// $BENCH_OUT.png (the bench asks for it when a prompt is never seen).
import fs from 'node:fs';
import { cleanup, openWorkbench, startCodeServer } from '../editors/vscode/testkit/harness.mjs';

const env = process.env;

/**
 * Installed in the page: stamps each appearance of the question's QuickPick,
 * once. Every prompt asks the same question, so what tells one appearance
 * from the next is the widget having been hidden in between. The workbench
 * hides it with a 150 ms closing animation (class `quick-input-widget-closing`,
 * `inert`, then `display: none`) and a show within it ends the animation and
 * shows again in one task: `display: none` and back in one MutationObserver
 * callback. So a hide is taken from every sign of it: the widget seen closing
 * or hidden, a mutation record whose old style had `display: none`, a new
 * widget element.
 */
function watchQuickPick() {
  let stamped = null; // the widget element of the appearance stamped last
  const hidden = (widget) => widget.style.display === 'none' || widget.inert || !widget.isConnected
    || widget.classList.contains('quick-input-widget-closing');
  const check = (records) => {
    for (const record of records) {
      if (record.type === 'attributes' && record.attributeName === 'style' && stamped === record.target
        && /display:\s*none/.test(record.oldValue ?? '')) stamped = null;
    }
    const widget = [...document.querySelectorAll('.quick-input-widget')].find((w) => !hidden(w));
    if (stamped && (stamped !== widget || hidden(stamped))) stamped = null;
    if (!widget || stamped) return;
    const input = widget.querySelector('input');
    const asked = `${widget.textContent} ${input?.placeholder ?? ''} ${input?.getAttribute('aria-label') ?? ''}`;
    const row = [...widget.querySelectorAll('.monaco-list-row')].some((r) => r.textContent.includes('SQLite'));
    if (!asked.includes('Which database?') || !row) return;
    stamped = widget;
    const built = performance.timeOrigin + performance.now();
    requestAnimationFrame(() => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => window.__askMark(built, performance.timeOrigin + performance.now());
      channel.port2.postMessage(0);
    });
  };
  new MutationObserver(check).observe(document.body, {
    subtree: true, childList: true, attributes: true, attributeOldValue: true, characterData: true,
  });
}

/**
 * Installed in the page: keeps the long animation frames (over 50 ms: the
 * browser reports no shorter ones) with their script time and the style
 * and layout the scripts forced, to tell where a slow prompt's time went.
 */
function watchLongFrames() {
  window.__askFrames = [];
  new PerformanceObserver((list) => {
    for (const frame of list.getEntries()) {
      const scripts = frame.scripts ?? [];
      window.__askFrames.push({
        start: performance.timeOrigin + frame.startTime,
        end: performance.timeOrigin + frame.startTime + frame.duration,
        script: scripts.reduce((sum, s) => sum + s.duration, 0),
        forced: scripts.reduce((sum, s) => sum + s.forcedStyleAndLayoutDuration, 0),
      });
    }
  }).observe({ type: 'long-animation-frame', buffered: true });
}

/** ms since the epoch to ns, without a double's rounding of the ns. */
function ns(ms) {
  const whole = Math.floor(ms);
  return BigInt(whole) * 1000000n + BigInt(Math.round((ms - whole) * 1e6));
}

async function main() {
  const out = fs.openSync(env.BENCH_OUT, 'a');
  const server = await startCodeServer({
    settings: {
      'askLsp.path': env.ASK_LSP_BIN,
      'askLsp.servers': [{ name: 'opencode', url: env.BENCH_OPENCODE_URL, directory: env.BENCH_OPENCODE_DIR }],
      // Allows the bench's probe only (bench.py, time_to_visible).
      'askLsp.policy': JSON.parse(env.BENCH_POLICY ?? 'null'),
    },
    folder: env.BENCH_OPENCODE_DIR, prefix: 'ask-lsp-bench-vscode-', ms: 120000,
  });
  const page = await openWorkbench(server, { ms: 120000 });
  // Each appearance is pushed out of the page once stamped (a binding), not
  // polled for: a poll every few ms would be the bench's own work in the
  // renderer the prompt is drawn by.
  let marked = Promise.resolve();
  await page.exposeFunction('__askMark', (built, shown) => {
    fs.writeSync(out, `built ${ns(built)}\nshown ${ns(shown)}\n`);
    marked = marked.then(() => page.keyboard.press('Escape'));
  });
  await page.evaluate(watchQuickPick);
  await page.evaluate(watchLongFrames);
  const clock = async () => {
    const offset = await page.evaluate(() => performance.timeOrigin + performance.now() - Date.now());
    fs.writeSync(out, `clock ${offset}\n`);
  };
  await clock();
  console.log('ready');

  let open = true;
  let screenshot = false;
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (text) => (screenshot ||= text.includes('screenshot')));
  process.stdin.on('end', () => (open = false));
  while (open) {
    if (screenshot) {
      screenshot = false;
      await page.screenshot({ path: `${env.BENCH_OUT}.png` });
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  await marked;
  await clock();
  for (const f of await page.evaluate(() => window.__askFrames)) {
    fs.writeSync(out, `frame ${ns(f.start)} ${ns(f.end)} ${f.script.toFixed(1)} ${f.forced.toFixed(1)}\n`);
  }
}

main().then(cleanup, async (error) => {
  console.error(error);
  await cleanup();
  process.exit(1);
});
