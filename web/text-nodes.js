// The nodes bidi.js (controls) and combining-marks.js (marks) draw: a part's text or its
// marker, and the text nodes of a Markdown reply's tree replaced in place (its text sits in
// emphasis, links and code, at any depth).

const TEXT = 3;
const ELEMENT = 1;

/**
 * The node that draws `part`: its text, or a marker span of class `markerClass` (with
 * `--limit` for the note past the markers' bound) whose tooltip is the part's title.
 * @param {Document} doc
 * @param {{kind: 'text'|'marker'|'limit', text: string, title?: string}} part
 * @param {string} markerClass
 */
export function partNode(doc, { kind, text, title }, markerClass) {
  if (kind === 'text') return doc.createTextNode(text);
  const span = doc.createElement('span');
  span.className = kind === 'limit' ? `${markerClass} ${markerClass}--limit` : markerClass;
  span.title = title;
  span.dir = 'ltr'; // what it says reads left to right; an element's `dir="auto"` skips it
  span.append(doc.createTextNode(text));
  return span;
}

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
