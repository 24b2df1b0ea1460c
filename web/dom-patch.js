// Puts new nodes in an element in place of its children, keeping the children that stay: those
// equal to the new node at their place, and then the first that differs, when both are text
// (its text is changed from where they differ on: text that only grew is appended) or an
// element has the same kind and attributes (its own children are patched the same way). A
// selection in what stays stays, and so does what the browser laid out; text goes in as text,
// as everywhere in the page.

/**
 * @param {Element} parent
 * @param {Node[]} nodes the children `parent` must end up with (equal ones are not used)
 */
export function patchChildren(parent, nodes) {
  const old = [...parent.childNodes];
  let same = 0;
  while (same < old.length && same < nodes.length && old[same].isEqualNode(nodes[same])) same += 1;
  if (same < old.length && same < nodes.length && keep(old[same], nodes[same])) same += 1;
  for (const node of old.slice(same)) node.remove();
  parent.append(...nodes.slice(same));
}

/** Makes `node` equal to `wanted` in place, when both are text or have the same kind and
 * attributes; false when it must be replaced. */
function keep(node, wanted) {
  if (node.nodeType === Node.TEXT_NODE && wanted.nodeType === Node.TEXT_NODE) {
    // Only what follows the text both share changes: a selection before it stays (a line
    // rewritten by a carriage return at the end of a chunk leaves the lines above it be).
    const old = node.data;
    const text = wanted.data;
    let same = 0;
    while (same < old.length && same < text.length && old.charCodeAt(same) === text.charCodeAt(same)) same += 1;
    if (same < old.length || same < text.length) node.replaceData(same, old.length - same, text.slice(same));
    return true;
  }
  if (node.nodeType !== Node.ELEMENT_NODE || wanted.nodeType !== Node.ELEMENT_NODE) return false;
  if (node.nodeName !== wanted.nodeName || !sameAttributes(node, wanted)) return false;
  patchChildren(node, [...wanted.childNodes]);
  return true;
}

function sameAttributes(a, b) {
  if (a.attributes.length !== b.attributes.length) return false;
  for (const { name, value } of a.attributes) {
    if (b.getAttribute(name) !== value) return false;
  }
  return true;
}
