// A document just big enough for the page's text-drawing helpers (bidi.js, long-words.js,
// markdown-dom.js): text nodes, elements with any property, fragments, and the tree moves they
// use (append, replaceWith, replaceChildren, firstChild, nextSibling).

export function fakeDocument() {
  class FakeNode {
    constructor(nodeType) {
      this.nodeType = nodeType;
      this.childNodes = [];
      this.parentNode = null;
      this.ownerDocument = doc;
    }

    get firstChild() { return this.childNodes[0] ?? null; }

    get nextSibling() {
      const siblings = this.parentNode?.childNodes ?? [];
      return siblings[siblings.indexOf(this) + 1] ?? null;
    }

    append(...nodes) {
      for (const node of nodes) {
        if (node.nodeType === 11) {
          this.append(...node.childNodes);
          node.childNodes = [];
          continue;
        }
        node.parentNode?.childNodes.splice(node.parentNode.childNodes.indexOf(node), 1);
        node.parentNode = this;
        this.childNodes.push(node);
      }
    }

    replaceChildren(...nodes) {
      for (const node of this.childNodes) node.parentNode = null;
      this.childNodes = [];
      this.append(...nodes);
    }

    replaceWith(...nodes) {
      const siblings = this.parentNode.childNodes;
      for (const node of nodes) node.parentNode = this.parentNode;
      siblings.splice(siblings.indexOf(this), 1, ...nodes);
      this.parentNode = null;
    }

    get textContent() {
      return this.nodeType === 3 ? this.data : this.childNodes.map((node) => node.textContent).join('');
    }

    /** Elements under this one (document order) whose class list holds `name`. */
    withClass(name) {
      const found = [];
      const walk = (node) => {
        for (const child of node.childNodes) {
          if (child.nodeType === 1 && String(child.className).split(' ').includes(name)) found.push(child);
          walk(child);
        }
      };
      walk(this);
      return found;
    }
  }
  const doc = {
    createTextNode(data) {
      const node = new FakeNode(3);
      node.data = data;
      return node;
    },
    createElement(tag) {
      const node = new FakeNode(1);
      node.localName = tag;
      node.tagName = tag.toUpperCase();
      node.className = '';
      node.title = '';
      node.dataset = {};
      return node;
    },
    createDocumentFragment: () => new FakeNode(11),
  };
  return doc;
}
