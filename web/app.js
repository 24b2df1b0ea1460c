// The page: pick the session from the URL, load its messages, follow its feed.
// Everything with rules lives in small modules (see docs/web.md); this file only wires them.

import { ApiError, UnaddressableIdError, createApi, isNotFound, revisionOf } from './api.js';
import { authHeaders, createRefusals, createTokenStore, tokenProblem } from './auth.js';
import { setVisibleText, visibleTextNodes } from './bidi.js';
import { createCommandFinished } from './command-finished.js';
import { h } from './dom.js';
import { fetchEventSource } from './event-stream.js';
import { createFeed } from './feed.js';
import { suspendWhileHidden } from './hidden-tab.js';
import { createMessageList } from './message-list.js';
import { createBottomKeeper } from './page-bottom.js';
import { holdReaderPlace } from './reader-place.js';
import { reloadOnce } from './reload-once.js';
import { parseRoute, sessionUrl } from './route.js';
import { createPlainRow, guardRows } from './row-guard.js';
import { createRow } from './rows.js';
import { createScrollWindow } from './scroll-window.js';
import { sessionHeaderParts } from './session-header.js';
import { showSessionIndex } from './session-index.js';
import { offerSignOut, showSignIn } from './sign-in.js';
import { rowKind } from './status.js';
import { createTurnMarker } from './turn-marker.js';

const FEED_LABELS = {
  connecting: 'Connecting…',
  live: 'Live',
  reconnecting: 'Reconnecting…',
  busy: 'Too many feeds open',
  paused: 'Paused (tab hidden)',
  stopped: 'Stopped',
  deleted: 'Deleted',
};

const main = document.getElementById('main');
const header = document.getElementById('session');
const feedStatus = document.getElementById('feed-status');
const tokens = createTokenStore();
const withToken = () => authHeaders(tokens.get());
// "Sign out" while the tab holds a token: the only way to give another one when the service
// does not refuse it (a token limited to other tasks is answered 404).
const signOut = offerSignOut(document.getElementById('sign-out'), tokens);
const route = parseRoute(window.location.href);
// What the session view runs (its feed, open outputs' polls, paging): stopped on a refusal.
let stopSession = () => {};
// Every answer refusing the tab's token comes here, whichever request it answered (the session,
// a page of older messages, an open output's poll, the index's next page, the feed): the page
// stops and shows the sign-in form, once (auth.js).
const refusals = createRefusals({
  holdsToken: () => tokens.get() !== '',
  onRefused: (refusal, detail) => {
    stopSession();
    signIn(refusal, detail);
  },
});

start().catch(showError);

async function start() {
  // A kept token no header can carry (fetch would throw before sending anything) is asked again.
  const problem = tokens.get() === '' ? null : tokenProblem(tokens.get());
  if (problem) {
    signIn('invalid', problem);
    return;
  }
  const api = createApi({ headers: withToken, onRefused: refusals.check });
  if (!route) {
    document.title = 'Sessions · shellexec';
    await showSessionIndex(main, api, openForm());
    return;
  }
  const { session, messages, turns, hasOlder } = await load(api, route);
  showSession(session);

  const list = h('ol', { class: 'messages', 'data-testid': 'message-list' });
  // A polite live region saying how a copy went (a region of its own: the finished commands'
  // is paced, and a copy's result is said at once).
  const copyResult = h('p', { class: 'visually-hidden', role: 'status', 'data-testid': 'copy-result' });
  main.replaceChildren(list, copyResult);
  // Live changes keep a reader at the bottom there, reading no layout per change.
  const bottom = createBottomKeeper();
  const keepingBottom = (change) => bottom.around(change);
  const keepingBottomInFrame = (change) => bottom.aroundInFrame(change);
  const rows = createMessageList(list, {
    // A message that cannot be drawn shows as plain text; it never stops the rest (ADR 0124).
    createRow: guardRows({
      createRow: (message) =>
        createRow(message, {
          loadShellOutput: (messageId, signal) => api.getShellOutput(session.id, messageId, signal),
          redrawing: keepingBottomInFrame, // a paced draw runs in an animation frame
          // A new text node each time: the same words twice (two copies) are said twice.
          sayCopied: (text) => copyResult.replaceChildren(document.createTextNode(text)),
        }),
      createFallbackRow: createPlainRow,
      kindOf: rowKind,
      onError: (error, message) => console.error(`Message ${message?.id} could not be drawn: shown as plain text.`, error),
    }),
    createTurnMarker,
  });
  // A polite live region: a command seen running is announced once it has finished (bounded).
  const said = h('p', { class: 'visually-hidden', role: 'status', 'data-testid': 'command-finished' });
  const finished = createCommandFinished({ say: (text) => (said.textContent = text) });
  for (const turn of turns) rows.setTurn(turn);
  for (const message of messages) {
    if (rows.upsert(message) !== 'ignored') finished.seen(message);
  }
  rows.trimOlder();
  list.dataset.loaded = 'true';
  window.scrollTo(0, document.documentElement.scrollHeight);
  // Whatever changes above a reader who is not at the bottom (an open output growing, an exit
  // line, a row updated) leaves the row they read where it is on screen.
  const place = holdReaderPlace({ listEl: list, readerAtBottom: () => bottom.atBottom });
  // Older messages load as the reader scrolls up; the DOM holds a bounded window of rows.
  const scrolling = createScrollWindow({
    rows,
    listEl: list,
    hasOlder,
    readerAtBottom: () => bottom.atBottom,
    loadOlder: () => api.listOlderMessages(session.id, { before: rows.oldest?.id }),
    // A page of its messages answered 404: the session was deleted, maybe while the feed was
    // not connected to say so. It ends as a `session_deleted` event ends it.
    onError: (error) => (isNotFound(error) ? feed.sessionDeleted() : showError(error)),
  });
  main.append(said);

  const feed = createFeed({
    sessionId: session.id,
    sinceRevision: revisionOf(session.revision),
    onEvent: ({ message }) => {
      if (message.session_id && message.session_id !== session.id) return;
      // A message older than those loaded waits for its page (scroll-window.js): unseen, it is
      // not announced either.
      const change = keepingBottom(() => scrolling.upsert(message));
      if (change !== 'ignored') finished.seen(message);
    },
    onTurn: ({ turn }) => {
      if (turn.session_id && turn.session_id !== session.id) return;
      keepingBottom(() => scrolling.append(() => rows.setTurn(turn)));
    },
    onStatus: showFeedStatus,
    onDeleted: () => {
      finished.stop();
      place.stop();
      scrolling.stop();
      rows.destroy();
      showDeleted(session);
    },
    // The events after our revision were compacted away, or our revision is beyond the
    // session's (REVISION_AHEAD): load the state again, and follow from its revision. Once: a
    // feed that says so again right after is not followed into a reload loop.
    onReset: () => {
      if (reloadOnce()) return;
      console.error('The feed still says this page must load the session again, right after it did: it stopped.');
      list.before(h('p', { class: 'page-error', role: 'alert', 'data-testid': 'feed-stopped' },
        'The live feed stopped: the service says this page is out of step with the session, even after loading it again. Reload the page to try again.'));
    },
    // EventSource cannot send the token: a fetch-based reader does (ADR 0051).
    EventSource: fetchEventSource({ headers: withToken, onRefused: (status) => refusals.check({ status }) }),
  });
  feed.start();
  // A hidden tab lets go of its connection: a browser opens only six to one host over HTTP/1.1.
  const hidden = suspendWhileHidden({ feed });

  // Navigating away, or a refused token, unmounts everything: open disclosures stop polling,
  // the feed closes, no older page is asked for.
  stopSession = () => {
    hidden.stop();
    bottom.stop();
    place.stop();
    finished.stop();
    scrolling.stop();
    feed.stop();
    rows.destroy();
  };
  window.addEventListener('pagehide', () => stopSession());
  window.addEventListener('pageshow', (event) => {
    if (event.persisted) window.location.reload(); // restored from the back-forward cache
  });
}

/**
 * The session, its newest messages and their turns: from the boot state for a task, else the
 * session and the newest page of its messages. Older pages load on scrolling up.
 */
async function load(api, route) {
  if (route.taskId) {
    const boot = await api.getBootState(route.taskId);
    if (!boot.session?.id) throw new Error(`Task ${route.taskId} has no session yet.`);
    // The boot state holds the latest messages: any older ones are found on scrolling up.
    return { ...boot, hasOlder: boot.messages.length > 0 };
  }
  // Read the revision first: the page then holds at least that state, and the feed replays
  // everything after it (replays are idempotent upserts).
  const session = await api.getSession(route.sessionId);
  const page = await api.listOlderMessages(route.sessionId);
  return { session, messages: page.messages, turns: page.turns, hasOlder: page.hasMore };
}

// The agent is free text (up to 64 characters): its bidi controls are shown as markers, never
// applied. The id and the task id cannot hold one (the server's id patterns are ASCII), but
// they are drawn the same way so no server-given string here depends on that.
const shownText = (text) => visibleTextNodes(document, text);
const HEADER_PARTS = {
  id: (text) => h('code', { class: 'session__id', 'data-testid': 'session-id' }, shownText(text)),
  agent: (text) => h('span', { class: 'session__agent', 'data-testid': 'session-agent' }, shownText(text)),
  task: (text) => h('span', { class: 'session__task' }, 'task ', h('code', { 'data-testid': 'session-task' }, shownText(text))),
};

function showSession(session) {
  document.title = `Session ${session.id} · shellexec`;
  const [id, ...others] = sessionHeaderParts(session);
  // Only parts that exist are passed: replaceChildren, unlike h(), writes null as "null".
  // "Session <id>" is the page's main heading (a screen reader lists the page by its headings).
  header.replaceChildren(
    h('h1', { class: 'session__title' },
      h('span', { class: 'session__label' }, 'Session'), ' ', HEADER_PARTS.id(id.text)),
    ...others.map(({ kind, text }) => HEADER_PARTS[kind](text)),
  );
  header.dataset.sessionId = session.id;
  header.hidden = false;
}

function showFeedStatus(status) {
  feedStatus.dataset.state = status;
  feedStatus.textContent = FEED_LABELS[status] ?? status;
  feedStatus.hidden = false;
}

function showDeleted(session) {
  main.replaceChildren(
    h('p', { class: 'page-error', role: 'status', 'data-testid': 'session-deleted' },
      `Session ${session.id} was deleted: its messages and output are gone.`),
  );
}

/** What went wrong, in place of the page; nothing once a refused token showed the sign-in form. */
function showError(error) {
  if (refusals.check(error)) return;
  const signedIn = tokens.get() !== '';
  const text =
    error instanceof ApiError && error.status === 404
      ? `Not found: check the session or task id in the address${signedIn
        ? ', or sign out and use a token that covers its task (this one may see only some tasks)' : ''}.`
      : error instanceof UnaddressableIdError
        ? `This page cannot open it. ${error.message}`
        : `Could not load ${route ? 'the session' : 'the list of sessions'}: ${error?.message ?? error}`;
  // The server's message may quote what was asked for (an id from the address, say).
  const line = h('p', { class: 'page-error', role: 'alert', 'data-testid': 'page-error' });
  setVisibleText(line, text);
  main.replaceChildren(line);
}

/** The sign-in form (sign-in.js), saying why a token the tab held is asked again. */
function signIn(refusal, detail = '') {
  feedStatus.hidden = true;
  showSignIn(main, { tokens, refusal, detail });
  signOut.refresh();
}

/** The form to open a session or task by id (under the session index at `/`). */
function openForm() {
  const input = h('input', { id: 'open-id', name: 'id', required: true, autocomplete: 'off', spellcheck: 'false' });
  const kind = h(
    'select',
    { id: 'open-kind', name: 'kind', 'aria-label': 'Kind of id' },
    h('option', { value: 'session' }, 'Session id'),
    h('option', { value: 'task' }, 'Task id'),
  );
  const form = h(
    'form',
    { class: 'open-form', 'data-testid': 'open-form' },
    h('h2', {}, 'Open a chat'),
    h('p', {}, 'Shows the messages and shell commands of one agent session as they happen.'),
    h('div', { class: 'open-form__row' }, kind, h('label', { class: 'visually-hidden', for: 'open-id' }, 'Id'), input,
      h('button', { type: 'submit' }, 'Open')),
    h('p', { class: 'hint' }, 'Addresses: ', h('code', {}, '/sessions/ID'), ', ', h('code', {}, '/?session=ID'), ', ',
      h('code', {}, '/?task=ID'), '.'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const id = input.value.trim();
    if (!id) return;
    window.location.assign(kind.value === 'task' ? `/?task=${encodeURIComponent(id)}` : sessionUrl(id));
  });
  return form;
}
