// Replacing the text nodes of a tree in place, for the helpers that draw a Markdown reply's
// text (bidi.js marks its controls, combining-marks.js bounds its marks): the text sits in
// emphasis, links and code, at any depth.

const TEXT = 3;
const ELEMENT = 1;

/**
 * Replaces every text node under `root`, in document order, by the nodes `replacement(node)`
 * gives (none: the node stays as it is). Walks the tree without recursion; the nodes put in
 * are not walked again.
 * @param {Node} root
 * @param {(node: Text) => Node[] | null} replacement
 */
export function replaceTextNodesIn(root, replacement) {
  let node = root.firstChild;
  while (node) {
    if (node.nodeType === TEXT) {
      const replacing = replacement(node);
      if (replacing && replacing.length > 0) {
        node.replaceWith(...replacing);
        node = replacing.at(-1);
      }
    } else if (node.nodeType === ELEMENT && node.firstChild) {
      node = node.firstChild;
      continue;
    }
    while (node !== root && !node.nextSibling) node = node.parentNode;
    if (node === root) break;
    node = node.nextSibling;
  }
  return root;
}
