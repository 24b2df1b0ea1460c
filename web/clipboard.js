// Copying and downloading text from the page. The asynchronous clipboard exists only in a secure
// context (https, or a loopback address); elsewhere the text is copied through a selection.

/** Copy `text`; resolves true when it was copied. */
export async function copyText(text, { doc = document, nav = globalThis.navigator } = {}) {
  if (nav?.clipboard?.writeText) {
    try {
      await nav.clipboard.writeText(text);
      return true;
    } catch {
      // Refused (permissions, focus): fall back to the selection below.
    }
  }
  return copyThroughSelection(text, doc);
}

function copyThroughSelection(text, doc) {
  // Selecting the text focuses the textarea; the focus goes back where it was (the button
  // pressed), else it was left on the page's body: a keyboard reader lost their place, and the
  // button kept saying `Copied`, as it goes back to its label when it loses the focus.
  const focused = doc.activeElement;
  const area = doc.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.className = 'visually-hidden';
  doc.body.append(area);
  area.select();
  let copied = false;
  try {
    copied = doc.execCommand('copy');
  } catch {
    copied = false;
  }
  area.remove();
  if (focused && focused !== doc.body && focused.isConnected) focused.focus({ preventScroll: true });
  return copied;
}

/** Offer `text` as a file download named `filename` (UTF-8 plain text). */
export function downloadText(text, filename, { doc = document, url = globalThis.URL } = {}) {
  const href = url.createObjectURL(new Blob([text], { type: 'text/plain;charset=utf-8' }));
  const link = doc.createElement('a');
  link.href = href;
  link.download = filename;
  link.className = 'visually-hidden';
  doc.body.append(link);
  link.click();
  link.remove();
  // The click has started the download; the object URL is no longer needed.
  setTimeout(() => url.revokeObjectURL(href), 0);
}
