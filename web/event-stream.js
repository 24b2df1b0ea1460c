// A server-sent-events reader over fetch, shaped like EventSource (onopen, onmessage, onerror,
// close) so the feed (feed.js) drives it unchanged. EventSource cannot send an
// `authorization` header; fetch can, and reads the stream with a ReadableStream (ADR 0051).
// Like EventSource it never reconnects by itself here: feed.js decides when and from where.
// An error thrown by the page's own event handler is reported and the stream goes on: it is
// not a broken connection, and reconnecting would only skip past the event that caused it.
// (feed.js catches its handlers' errors itself and retries the event once; this is the
// backstop for any other handler.)
// A feed refused with a JSON error says why: its error event carries the reason the error's
// details name (`REVISION_AHEAD`: reload the session and watch from its revision).

import { isRefusal, reasonOf } from './api.js';

/**
 * Splits SSE text into events: `data:` lines joined by newlines, dispatched at a blank line;
 * comments (`:`) and other fields are ignored. Chunks may cut lines anywhere.
 * @param {(data: string) => void} onData
 */
export function createSseParser(onData) {
  let buffer = '';
  let data = [];
  function line(text) {
    if (text === '') {
      if (data.length) onData(data.join('\n'));
      data = [];
    } else if (text.startsWith('data:')) {
      data.push(text.slice(text[5] === ' ' ? 6 : 5));
    }
  }
  return {
    push(chunk) {
      buffer += chunk;
      let end;
      while ((end = buffer.search(/\r\n|\r|\n/)) >= 0) {
        const breakLength = buffer.startsWith('\r\n', end) ? 2 : 1;
        line(buffer.slice(0, end));
        buffer = buffer.slice(end + breakLength);
      }
    },
  };
}

/**
 * A class to hand to createFeed as its EventSource.
 * @param {object} options
 * @param {() => Record<string, string>} [options.headers] read at each connection.
 * @param {(status: number) => void} [options.onRefused] a 401 or 403 answer, before onerror.
 * @param {(error: unknown) => void} [options.onHandlerError] onmessage threw (logged by default).
 * @param {typeof fetch} [options.fetch]
 */
export function fetchEventSource({
  headers = () => ({}), onRefused = () => {}, onHandlerError = reportHandlerError, fetch: fetchFn,
} = {}) {
  const doFetch = fetchFn ?? globalThis.fetch.bind(globalThis);
  return class FetchEventSource {
    constructor(url) {
      this.url = url;
      this.onopen = null;
      this.onmessage = null;
      this.onerror = null;
      this.controller = new AbortController();
      this.read();
    }

    close() {
      this.controller.abort();
    }

    fail(status, reason = '') {
      if (!this.controller.signal.aborted) this.onerror?.({ type: 'error', status, reason });
    }

    async read() {
      const { signal } = this.controller;
      let response;
      try {
        response = await doFetch(this.url, {
          headers: { Accept: 'text/event-stream', ...headers() },
          cache: 'no-store',
          signal,
        });
      } catch {
        this.fail(0);
        return;
      }
      const kind = response.headers.get('content-type') ?? '';
      if (!response.ok || !kind.startsWith('text/event-stream') || !response.body) {
        if (isRefusal(response.status)) onRefused(response.status);
        let reason = '';
        if (!response.ok && kind.startsWith('application/json')) {
          reason = reasonOf(await response.json().catch(() => null));
        } else {
          response.body?.cancel().catch(() => {});
        }
        this.fail(response.status, reason);
        return;
      }
      if (signal.aborted) return;
      this.onopen?.({ type: 'open' });
      const parser = createSseParser((data) => {
        if (signal.aborted) return;
        try {
          this.onmessage?.({ type: 'message', data });
        } catch (error) {
          onHandlerError(error);
        }
      });
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          parser.push(value);
        }
      } catch {
        // aborted by close(), or the connection broke: either way handled below
      }
      this.fail(response.status); // the stream ended: the feed reconnects from its revision
    }
  };
}

function reportHandlerError(error) {
  console.error('A feed event could not be handled; the feed goes on.', error);
}
