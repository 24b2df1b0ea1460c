// Injected into every test page before its own scripts (Playwright `add_init_script`).
// It only observes: what the page fetched and received, and when, so the tests can assert
// request timing, concurrency and payloads exactly as the page saw them.
(() => {
  const log = {
    shellFetches: [], // {url, start, end, outcome, shellOutputStatus} per shell-output fetch
    inFlight: 0,
    maxInFlight: 0,
    apiBodies: [], // {url, text} of every other /api/ response the page read
    feedUrls: [], // every EventSource the page opened
    feedData: [], // {data, at} of every feed event, received before the page's own handler
  };
  window.__shellexecTest = log;

  const realFetch = window.fetch.bind(window);
  window.fetch = (input, init) => {
    const url = typeof input === 'string' ? input : input.url;
    if (!url.includes('/api/')) return realFetch(input, init);
    if (!url.includes('/shell-output')) {
      return realFetch(input, init).then((response) => {
        response
          .clone()
          .text()
          .then((text) => log.apiBodies.push({ url, text }));
        return response;
      });
    }
    const entry = { url, start: performance.now(), end: null, outcome: null, shellOutputStatus: null };
    log.shellFetches.push(entry);
    log.inFlight += 1;
    log.maxInFlight = Math.max(log.maxInFlight, log.inFlight);
    const settle = (outcome) => {
      if (entry.end !== null) return;
      entry.end = performance.now();
      entry.outcome = outcome;
      log.inFlight -= 1;
    };
    return realFetch(input, init).then(
      (response) => {
        settle(String(response.status));
        response
          .clone()
          .json()
          .then((body) => (entry.shellOutputStatus = body && body.status), () => {});
        return response;
      },
      (error) => {
        settle(error && error.name ? error.name : 'error');
        throw error;
      },
    );
  };

  const RealEventSource = window.EventSource;
  window.EventSource = class extends RealEventSource {
    constructor(url, options) {
      super(url, options);
      log.feedUrls.push(String(url));
      this.addEventListener('message', (event) => log.feedData.push({ data: event.data, at: performance.now() }));
    }
  };

})();
