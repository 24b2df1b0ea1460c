// Two tiny DOM helpers. Text always goes in as text nodes, never as HTML.

/**
 * Create an element. `attrs` values: `false`/null/undefined skip the attribute, `true` sets it
 * empty; `class` and `data-*` are plain attributes. Children: nodes, strings, or null (skipped).
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === false || value === null || value === undefined) continue;
    el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/**
 * Mount exactly the `wanted` elements of `slots` (an ordered array) inside `parent`, keeping
 * their order, without moving an element that stays mounted (moving a node would reset its
 * scroll position).
 */
export function mountSlots(parent, slots, wanted) {
  for (const el of slots) {
    if (!wanted.has(el) && el.parentNode === parent) el.remove();
  }
  let next = null;
  for (let i = slots.length - 1; i >= 0; i -= 1) {
    const el = slots[i];
    if (!wanted.has(el)) continue;
    if (el.parentNode !== parent) parent.insertBefore(el, next);
    next = el;
  }
}

/** Set or remove a data-* attribute (null/undefined removes it). */
export function setData(el, name, value) {
  if (value === null || value === undefined) delete el.dataset[name];
  else el.dataset[name] = String(value);
}
