// A shell command row: the full command, the working directory, the result badge and, when the
// summary says output is retained, a collapsed output disclosure. The body is mounted, and the
// poller created, only while the disclosure is open; collapsing closes both.

import { renderTerminalText } from './ansi-dom.js';
import { setVisibleText } from './bidi.js';
import { copyText, downloadText } from './clipboard.js';
import { COMMAND_MARKED } from './invisibles.js';
import { h, mountSlots, setData } from './dom.js';
import { followTail } from './follow-tail.js';
import { outputView } from './output-view.js';
import { createShellOutputPoller } from './shell-output-poller.js';
import {
  commandName,
  commandOf,
  exitCodeOf,
  formatBytes,
  hasRetainedOutput,
  isTerminalStatus,
  isTruncated,
  outputBytes,
  resultOf,
  shellStatusLabel,
  statusOf,
  workDirOf,
} from './status.js';

let nextBodyId = 1;

// What the output's toggle says.
const SHOW = 'Show output';
const HIDE = 'Hide output';

/**
 * @param {object} message a `tool_execute` Message.
 * @param {object} deps
 * @param {(messageId: string, signal: AbortSignal) => Promise<object>} deps.loadShellOutput
 * @param {typeof createShellOutputPoller} [deps.createPoller]
 * @param {(text: string) => void} [deps.sayCopied] says to a screen reader how a copy went
 *   (a live region of the page).
 * @returns {{el: HTMLElement, update(message: object): void, destroy(): void}}
 */
export function createShellRow(message, { loadShellOutput, createPoller = createShellOutputPoller, sayCopied = () => {} }) {
  let current = message;
  let disclosure = null; // {poller, body, parts} while open

  const badge = h('span', { class: 'badge', 'data-testid': 'shell-status' });
  const command = h('code', { class: 'shell__command', 'data-testid': 'shell-command' });
  const workDir = h('span', { class: 'shell__workdir', 'data-testid': 'shell-workdir' });
  const meta = h('div', { class: 'shell__meta' });
  const bodyId = `shell-output-${nextBodyId++}`;
  // As wide as its wider label (style.css): what follows it in the toggle stays in place.
  const toggleLabel = h('span', { class: 'toggle__label', 'data-labels': `${SHOW}\n${HIDE}` });
  // Which command's output, for a screen reader: every row's toggle said only "Show output".
  const toggleCommand = h('span', { class: 'visually-hidden' });
  const toggleSize = h('span', { class: 'toggle__size' });
  // The summary says so before anyone opens the body: the collapsed row shows it too.
  const toggleTruncated = h('span', { class: 'toggle__truncated', 'data-testid': 'shell-truncated-marker' }, 'truncated');
  const toggle = h(
    'button',
    {
      type: 'button',
      class: 'shell__toggle',
      'data-testid': 'shell-output-toggle',
      'aria-expanded': 'false',
      'aria-controls': bodyId,
    },
    h('span', { class: 'toggle__chevron', 'aria-hidden': 'true' }),
    toggleLabel,
    toggleCommand,
    toggleSize,
  );
  const copyCommand = createCopyButton('Copy', { 'data-testid': 'shell-command-copy', 'aria-label': 'Copy command' });
  copyCommand.addEventListener('click', () => copyWithFeedback(copyCommand, commandOf(current), 'Command', sayCopied));
  toggle.addEventListener('click', () => (disclosure ? collapse() : expand()));

  const card = h(
    'div',
    { class: 'shell' },
    h('div', { class: 'shell__line' }, h('span', { class: 'shell__prompt', 'aria-hidden': 'true' }, '$'), command, copyCommand),
    meta,
  );
  const el = h('li', { class: 'row row--shell', 'data-testid': 'shell-row', 'data-message-id': current.id }, card);

  function renderHead() {
    const status = statusOf(current);
    const exitCode = exitCodeOf(current);
    const result = resultOf(current);
    setData(el, 'status', status || 'unknown');
    setData(el, 'result', result);
    setData(el, 'exitCode', exitCode);
    setData(el, 'hasOutput', hasRetainedOutput(current));
    setData(el, 'expanded', Boolean(disclosure));

    // Bidi controls and invisible characters as markers, so what shows is what ran; Copy takes
    // the real text.
    setVisibleText(command, commandOf(current), COMMAND_MARKED);
    nameControls();
    badge.className = `badge badge--${result}`;
    badge.textContent = shellStatusLabel(result, status, exitCode);
    setData(badge, 'result', result);

    const dir = workDirOf(current);
    if (dir) setVisibleText(workDir, dir, COMMAND_MARKED);
    mountSlots(meta, [workDir, badge], new Set(dir ? [workDir, badge] : [badge]));

    const offered = hasRetainedOutput(current) || Boolean(disclosure);
    if (offered && toggle.parentNode !== card) card.insertBefore(toggle, disclosure?.body ?? null);
    if (!offered) toggle.remove();
    renderToggle();
  }

  /** Names that say which command the buttons and the output are of (a bounded part of it):
   * a screen reader listing them heard "Copy command" and "Command output" once per row. */
  function nameControls() {
    const name = commandName(commandOf(current));
    const of = (what) => (name ? `${what} of ${name}` : what);
    copyCommand.setAttribute('aria-label', name ? `Copy command: ${name}` : 'Copy command');
    toggleCommand.textContent = name ? ` of ${name}` : '';
    if (!disclosure) return;
    disclosure.body.setAttribute('aria-label', of('Output'));
    disclosure.parts.copyButton.setAttribute('aria-label', of('Copy output'));
    disclosure.parts.downloadButton.setAttribute('aria-label', of('Download output'));
  }

  function renderToggle() {
    const open = Boolean(disclosure);
    toggle.setAttribute('aria-expanded', String(open));
    toggleLabel.textContent = open ? HIDE : SHOW;
    const bytes = outputBytes(current);
    const sizes = [];
    if (bytes.stdout > 0) sizes.push(formatBytes(bytes.stdout));
    if (bytes.stderr > 0) sizes.push(`stderr ${formatBytes(bytes.stderr)}`);
    toggleSize.textContent = sizes.length ? sizes.join(' · ') : '';
    if (isTruncated(current)) toggle.append(toggleTruncated);
    else toggleTruncated.remove();
  }

  function expand() {
    if (disclosure) return;
    const parts = createBodyParts({
      copy: (button) => copyWithFeedback(button, disclosure?.parts.shown() ?? '', 'Output', sayCopied),
      download: () => downloadText(disclosure?.parts.stored ?? '', `output-${current.id}.log`),
    });
    const body = h('div', {
      class: 'shell__body',
      id: bodyId,
      role: 'region',
      'data-testid': 'shell-output-body',
    }); // named by nameControls
    const poller = createPoller({
      fetchShellOutput: (signal) => loadShellOutput(current.id, signal),
      onShellOutput: () => renderBody(),
      onUnavailable: () => renderBody(),
      onState: (state) => setData(body, 'pollState', state),
    });
    disclosure = { poller, body, parts, revealed: false };
    card.append(body);
    renderHead();
    renderBody();
    if (isTerminalStatus(statusOf(current))) poller.notifyTerminal(); // the first fetch is final
    poller.open();
  }

  function collapse() {
    if (!disclosure) return;
    const { poller, body, parts } = disclosure;
    disclosure = null;
    poller.close();
    for (const { view } of parts.held.values()) view.dispose();
    for (const follower of parts.followers.values()) follower.dispose();
    body.remove();
    renderHead();
  }

  function renderBody() {
    if (!disclosure) return;
    const { poller, body, parts } = disclosure;
    const view = outputView({
      shellOutput: poller.shellOutput,
      unavailable: poller.unavailable,
      messageStatus: statusOf(current),
      messageExitCode: exitCodeOf(current),
      messageResult: resultOf(current),
    });
    setData(body, 'state', view.unavailable ? 'unavailable' : view.loading ? 'loading' : 'ready');
    const wanted = new Set();
    if (view.unavailable) wanted.add(parts.unavailable);
    if (view.loading) wanted.add(parts.loading);
    if (view.stdout !== null || view.stderr !== null) wanted.add(parts.actions);
    if (view.stdout !== null) wanted.add(parts.stdout);
    if (view.stderr !== null) wanted.add(parts.stderr);
    if (view.empty) wanted.add(parts.empty);
    if (view.truncated) wanted.add(parts.truncated);
    if (view.exit) {
      parts.exit.textContent = view.exit.text;
      parts.exit.className = `exit exit--${view.exit.result}`;
      setData(parts.exit, 'exitCode', view.exit.code);
      setData(parts.exit, 'result', view.exit.result);
      wanted.add(parts.exit);
    }
    mountSlots(body, parts.order, wanted);
    // Text after mounting, so the scroll position can follow the tail.
    const stdoutView = view.stdout !== null ? setOutputText(parts.stdout, view.stdout, parts) : null;
    const stderrView = view.stderr !== null ? setOutputText(parts.stderrText, view.stderr, parts) : null;
    parts.shown = () => joinStreams(stdoutView?.shown() ?? '', stderrView?.shown() ?? '');
    parts.stored = joinStreams(view.stdout ?? '', view.stderr ?? '');
    if (!view.loading && !disclosure.revealed) {
      disclosure.revealed = true;
      revealBelow(body, toggle);
    }
  }

  renderHead();

  return {
    el,
    update(message) {
      const previous = current;
      current = message;
      renderHead();
      if (disclosure && isTerminalStatus(statusOf(current))) {
        const reconciled = isTerminalStatus(statusOf(previous)) && previous.updated_at !== current.updated_at;
        if (reconciled) disclosure.poller.refresh();
        else disclosure.poller.notifyTerminal();
      }
      renderBody();
    },
    destroy() {
      collapse();
    },
  };
}

// Space kept between the body and the screen's bottom, and the toggle and its top (px).
const REVEAL_MARGIN = 8;

/**
 * Scrolls the page down just enough to show the body the reader opened (once, when its first
 * answer is drawn): opened on a row near the bottom, it used to open below the screen. The
 * toggle pressed stays on screen, so nothing the reader was reading above it is taken away.
 */
function revealBelow(body, toggle) {
  const view = body.ownerDocument.defaultView;
  const below = body.getBoundingClientRect().bottom - view.innerHeight + REVEAL_MARGIN;
  const room = toggle.getBoundingClientRect().top - REVEAL_MARGIN; // how far the toggle may go up
  const by = Math.min(below, room);
  if (by > 0) view.scrollBy(0, by);
}

/** One text of both streams, for copying and downloading: stdout, then stderr under a label. */
function joinStreams(stdout, stderr) {
  if (!stderr) return stdout;
  const separator = stdout === '' || stdout.endsWith('\n') ? '' : '\n';
  return `${stdout}${separator}--- stderr ---\n${stderr}`;
}

// What a copy button says after a copy, until it loses the focus. A failure says `Failed`, no
// wider than `Copied` (`Copy failed` would have made every command's button 26 px wider).
const COPIED = 'Copied';
const COPY_FAILED = 'Failed';

/**
 * A copy button saying `label`. It holds every label it can show (`data-labels`), and is as
 * wide as the widest (style.css): its label going back from `Copied` to `Copy` when a press
 * elsewhere took its focus made it narrower, which re-wrapped a long command and moved the
 * button pressed (`Copy output`) from under the pointer before its release, losing the click.
 */
function createCopyButton(label, attrs) {
  return h('button', {
    type: 'button',
    class: 'copy-button',
    ...attrs,
    'data-label': label,
    'data-labels': [label, COPIED, COPY_FAILED].join('\n'),
  }, label);
}

/** Copies `text` (the row's `what`, "Command" or "Output"); the button says how it went, and
 * so does `say`, for a screen reader: the button's new label is not read out while the focus
 * stays on it, and the command's button is named by its aria-label, which does not change. */
async function copyWithFeedback(button, text, what, say) {
  const copied = await copyText(text);
  button.dataset.copied = String(copied);
  button.textContent = copied ? COPIED : COPY_FAILED;
  say(copied ? `${what} copied` : `${what} not copied: the browser refused the clipboard`);
  button.addEventListener('blur', () => {
    button.textContent = button.dataset.label;
    delete button.dataset.copied;
  }, { once: true });
}

/** The body's parts, in display order; mounted only when they have something to show. */
function createBodyParts({ copy, download }) {
  const copyButton = createCopyButton('Copy output', { 'data-testid': 'shell-output-copy' });
  copyButton.addEventListener('click', () => copy(copyButton));
  const downloadButton = h('button', { type: 'button', class: 'copy-button', 'data-testid': 'shell-output-download' },
    'Download');
  downloadButton.addEventListener('click', () => download());
  const actions = h('div', { class: 'output-actions' }, copyButton, downloadButton);
  const unavailable = h(
    'p',
    { class: 'notice notice--unavailable', role: 'status', 'data-testid': 'shell-output-unavailable' },
    'Output unavailable. Retrying…',
  );
  const loading = h('p', { class: 'notice notice--loading', 'data-testid': 'shell-output-loading' }, 'Loading output…');
  const stdout = h('pre', {
    class: 'output output--stdout',
    tabindex: '0',
    'aria-label': 'Output',
    'data-testid': 'shell-output-stdout',
  });
  const stderrText = h('pre', {
    class: 'output output--stderr',
    tabindex: '0',
    'aria-label': 'Standard error',
    'data-testid': 'shell-output-stderr',
  });
  const stderr = h('div', { class: 'stderr' }, h('div', { class: 'stderr__label' }, 'stderr'), stderrText);
  const empty = h('p', { class: 'notice', 'data-testid': 'shell-output-empty' }, 'No output.');
  const truncated = h(
    'p',
    { class: 'notice notice--truncated', 'data-testid': 'shell-output-truncated' },
    'Output truncated: only the most recent part was kept.',
  );
  const exit = h('p', { class: 'exit', 'data-testid': 'shell-exit' });
  return {
    unavailable,
    loading,
    actions,
    copyButton,
    downloadButton,
    shown: () => '', // the output as the page shows it (what "Copy output" copies)
    stored: '', // the output as stored, escape sequences included (what "Download" saves)
    held: new Map(), // output region -> {stored, view}: what it holds now
    followers: new Map(), // output region -> its followTail, which keeps it at its end
    stdout,
    stderr,
    stderrText,
    empty,
    truncated,
    exit,
    order: [unavailable, loading, actions, stdout, stderr, empty, truncated, exit],
  };
}

/**
 * Show `text` in an output region as a terminal would (colours, carriage returns). The region
 * opens at its end and stays there while the reader follows it (follow-tail.js). A newer text
 * changes only what changed in it: a reader who scrolled up stays where they are, and their
 * selection with them. Returns its view (`shown()`, `dispose()`).
 */
function setOutputText(pre, text, { held, followers }) {
  const current = held.get(pre);
  if (current?.stored === text) return current.view;
  const view = current?.view ?? renderTerminalText(pre, text);
  if (current) view.update(text);
  held.set(pre, { stored: text, view });
  if (!followers.has(pre)) followers.set(pre, followTail(pre));
  followers.get(pre).contentChanged();
  return view;
}
