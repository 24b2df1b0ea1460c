// A turn's end marker row: quiet, after the turn's last message. It says how the turn ended
// (the stop reason as ACP names it, and how long it took) or that it is still running.

import { setVisibleText } from './bidi.js';
import { h, setData } from './dom.js';
import { turnMarker } from './turns.js';

export function createTurnMarker(turn) {
  const label = h('span', { class: 'turn-end__label' });
  const reason = h('code', { class: 'turn-end__reason', 'data-testid': 'turn-stop-reason' });
  const duration = h('span', { class: 'turn-end__duration', 'data-testid': 'turn-duration' });
  const el = h('li', { class: 'row row--turn', 'data-testid': 'turn-end', 'data-turn-id': turn.id },
    h('div', { class: 'turn-end' }, label, reason, duration));

  function update(next) {
    const view = turnMarker(next);
    setData(el, 'state', view.state);
    setData(el, 'stopReason', view.state === 'complete' ? view.stopReason : null);
    label.textContent = view.state === 'running' ? 'Turn running…' : 'Turn ended';
    setVisibleText(reason, view.stopReason); // free text from the agent: bidi controls as markers
    reason.hidden = view.stopReason === '';
    duration.textContent = view.duration;
    duration.hidden = view.duration === '';
  }
  update(turn);
  return { el, update };
}
