// The sign-in form, and the top bar's "Sign out" while the tab holds a token.
//
// The form appears when the service wants a token the tab does not have: on a 401 (no token,
// or one unknown or revoked), on a 403 (a valid token without the `read` scope), or when the
// token the tab kept cannot be sent at all; it says which, and forgets that token. A token
// pasted into it is checked before it is kept (auth.js, `tokenProblem`). "Sign out" forgets the
// token whatever the page shows: a token limited to other tasks is answered 404 for everything
// else, so no answer ever asked for another one, and the tab was stuck with it until it closed.

import { tokenProblem } from './auth.js';
import { setVisibleText } from './bidi.js';
import { h } from './dom.js';

/** What the form says about the token the tab held, by why it asks again. */
const REFUSALS = {
  unknown: 'That token was not accepted: it is unknown or revoked.',
  scope: 'That token may not read sessions: it lacks the read scope.',
  invalid: 'The token this tab kept cannot be sent:',
};

/**
 * Shows the sign-in form in `main`, forgetting the token the tab held.
 * @param {HTMLElement} main
 * @param {object} options
 * @param {{get(): string, set(token: string): void, clear(): void}} options.tokens
 * @param {'unknown'|'scope'|'invalid'|null} [options.refusal] why a held token is asked again
 * @param {string} [options.detail] what the service or the check said about it
 * @param {() => void} [options.reload]
 */
export function showSignIn(main, { tokens, refusal = null, detail = '', reload = () => window.location.reload() }) {
  const held = tokens.get() !== '';
  tokens.clear();
  const input = h('input', {
    id: 'sign-in-token', name: 'token', type: 'password', required: true, autocomplete: 'off', spellcheck: 'false',
    'aria-describedby': 'sign-in-problem',
  });
  // Said about the token pasted, before anything is sent (empty until then).
  const problem = h('p', { class: 'page-error', id: 'sign-in-problem', role: 'alert', 'data-testid': 'sign-in-invalid', hidden: true });
  const form = h(
    'form',
    { class: 'open-form', 'data-testid': 'sign-in-form', novalidate: true },
    h('h1', {}, 'Sign in'),
    h('p', {}, 'This service requires a token with the read scope. Create one with ',
      h('code', {}, 'shellexec token create --name NAME --scope read'), '.'),
    held && refusal ? refusalLine(refusal, detail) : null,
    h('div', { class: 'open-form__row' }, h('label', { class: 'visually-hidden', for: 'sign-in-token' }, 'Token'), input,
      h('button', { type: 'submit' }, 'Sign in')),
    problem,
    h('p', { class: 'hint' }, 'The token is kept in this browser tab only, until it closes.'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const token = input.value.trim();
    const wrong = tokenProblem(token);
    if (wrong) {
      problem.textContent = wrong;
      problem.hidden = false;
      input.setAttribute('aria-invalid', 'true');
      input.focus();
      return;
    }
    tokens.set(token);
    reload();
  });
  main.replaceChildren(form);
  input.focus();
}

function refusalLine(refusal, detail) {
  const line = h('p', { class: 'page-error', role: 'alert', 'data-testid': 'sign-in-rejected', 'data-reason': refusal });
  let text = REFUSALS[refusal];
  if (refusal === 'invalid') text = `${text} ${detail}`;
  else if (refusal === 'scope' && detail) text = `${text} The service said: ${detail}.`;
  setVisibleText(line, text); // the service's message may quote a token's name
  return line;
}

/**
 * Shows `button` ("Sign out") while the tab holds a token; pressing it forgets the token and
 * loads the page again (the service then asks for one, if it needs one).
 * @param {HTMLButtonElement} button
 * @param {{get(): string, clear(): void}} tokens
 * @param {() => void} [reload]
 */
export function offerSignOut(button, tokens, reload = () => window.location.reload()) {
  button.hidden = tokens.get() === '';
  button.addEventListener('click', () => {
    tokens.clear();
    reload();
  });
  return {
    /** The token was forgotten meanwhile (the sign-in form is shown). */
    refresh() {
      button.hidden = tokens.get() === '';
    },
  };
}
