// The index at `/`: the recent sessions the token may see, newest first, each linking to its
// chat, with "Show older sessions" paging back (session-pages.js: a session shown that was
// deleted meanwhile is dropped, and the pages go on from one still there); and the form to open
// a session or task by id. A page that fails says so in a line of its own, under the count,
// and the next press tries again.

import { setVisibleText, visibleTextNodes } from './bidi.js';
import { h } from './dom.js';
import { sessionUrl } from './route.js';
import { createSessionPages } from './session-pages.js';
import { capitalize } from './status.js';
import { timeLabel } from './time-label.js';

/**
 * @param {HTMLElement} main
 * @param {{listSessions: (options: {before?: string}) => Promise<{sessions: object[], total: number, hasMore: boolean, cursor: string}>}} api
 * @param {HTMLElement} openForm the form to open an id, shown under the list
 */
export async function showSessionIndex(main, api, openForm) {
  const list = h('ol', { class: 'session-list', 'data-testid': 'session-index-list' });
  const count = h('p', { class: 'hint', 'data-testid': 'session-index-count' });
  const failed = h('p', { class: 'page-error', role: 'alert', 'data-testid': 'session-index-error', hidden: true });
  const more = h('button', { type: 'button', class: 'more-button', 'data-testid': 'session-index-more' },
    'Show older sessions');
  const section = h('section', { class: 'session-index', 'data-testid': 'session-index', 'aria-labelledby': 'index-title' },
    h('h1', { id: 'index-title' }, 'Recent sessions'), count, list, failed, more);
  main.replaceChildren(section, openForm);

  const pages = createSessionPages((options) => api.listSessions(options));
  let loading = false;
  const names = new Set(); // the links' accessible names so far: each must tell its session apart
  // While a page loads the button says so but stays enabled: disabling the focused button sent
  // the keyboard's focus to the page's start. A press meanwhile does nothing.
  function setLoading(on) {
    loading = on;
    if (on) more.setAttribute('aria-disabled', 'true');
    else more.removeAttribute('aria-disabled');
  }
  async function loadPage() {
    setLoading(true);
    section.dataset.state = 'loading';
    const page = await pages.next();
    for (const id of page.gone) {
      // Deleted since it was shown: its link would only say "Not found".
      for (const item of list.querySelectorAll('[data-testid=session-index-item]')) {
        if (item.dataset.sessionId === id) item.remove();
      }
    }
    const items = page.sessions.map((session) => sessionItem(session, names));
    list.append(...items);
    failed.hidden = true;
    setLoading(false);
    // The last page hides the button: focus goes on to the first session it brought.
    const focused = more.ownerDocument.activeElement === more;
    more.hidden = !page.hasMore;
    if (focused && more.hidden) items[0]?.querySelector('a')?.focus();
    count.textContent = page.total === 1 ? '1 session' : `${page.total} sessions`;
    if (list.childElementCount === 0) list.replaceWith(h('p', { class: 'notice', 'data-testid': 'session-index-empty' }, 'No sessions yet.'));
    section.dataset.state = 'ready';
    section.dataset.loaded = String(list.childElementCount);
  }
  more.addEventListener('click', () => {
    if (loading) return;
    loadPage().catch((error) => {
      setLoading(false);
      section.dataset.state = 'error';
      setVisibleText(failed, `Could not load more sessions: ${error?.message ?? error}`);
      failed.hidden = false;
    });
  });
  await loadPage();
}

// The agent is free text: its bidi controls are shown as markers, never applied (bidi.js). A
// task id cannot hold one (its pattern is ASCII); it is drawn the same way all the same.
const shownText = (text) => visibleTextNodes(document, String(text));

/**
 * A session's item. Its link shows the task, which the sessions of one task share, so its
 * accessible name goes on, unseen, with when the session started ("demo session started
 * 12/5/2026, 9:44:05 PM", in the browser's locale), and with the session's id when that is not
 * enough (`names`: the names given so far, to which this one is added).
 */
function sessionItem(session, names) {
  const state = session.state === 'running' ? 'running' : 'idle';
  const commands = Number(session.command_count ?? 0);
  const failures = Number(session.failure_count ?? 0);
  const started = timeLabel(session.created_at, new Date());
  const agent = typeof session.agent === 'string' ? session.agent : '';
  const title = String(session.task_id || session.id);
  const when = started ? `started ${started.title}` : '';
  let unseen = started ? `session ${when}` : '';
  if (names.has(`${title} ${unseen}`)) unseen = [`session ${session.id}`, when].filter(Boolean).join(', ');
  names.add(`${title} ${unseen}`);
  return h(
    'li',
    { class: 'session-item', 'data-testid': 'session-index-item', 'data-session-id': session.id, 'data-state': state },
    h('a', { class: 'session-item__link', href: sessionUrl(session.id) },
      h('span', { class: 'session-item__task' }, shownText(title)),
      unseen ? h('span', { class: 'visually-hidden' }, unseen) : null),
    h('span', { class: `badge badge--${state === 'running' ? 'running' : 'neutral'} session-item__state` }, capitalize(state)),
    h('span', { class: 'session-item__meta' },
      agent ? h('span', { class: 'session-item__agent', 'data-testid': 'session-index-agent' }, shownText(agent)) : null,
      started ? h('time', { datetime: session.created_at, title: started.title }, started.text) : null,
      h('span', { 'data-testid': 'session-index-commands' }, commands === 1 ? '1 command' : `${commands} commands`),
      h('span', { class: failures > 0 ? 'session-item__failures' : '', 'data-testid': 'session-index-failures' },
        failures === 1 ? '1 failed' : `${failures} failed`)),
  );
}
