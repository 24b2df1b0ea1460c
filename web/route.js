// Which session the page shows, from its URL:
//   /sessions/ID      a session
//   /?session=ID      a session
//   /?task=ID         the latest session of a task (through its boot state)

/** @returns {{sessionId: string} | {taskId: string} | null} */
export function parseRoute(url) {
  const { pathname, searchParams } = new URL(url, 'http://localhost');
  const match = /^\/sessions\/([^/]+)\/?$/.exec(pathname);
  if (match) {
    const sessionId = safeDecode(match[1]).trim();
    if (sessionId) return { sessionId };
  }
  const sessionId = searchParams.get('session')?.trim();
  if (sessionId) return { sessionId };
  const taskId = searchParams.get('task')?.trim();
  if (taskId) return { taskId };
  return null;
}

/** The canonical address of a session's page. A browser would read `/sessions/..` as `/`
 * (a dot segment, even written `%2E`), so such an id goes in the query, where it stays itself. */
export function sessionUrl(sessionId) {
  if (sessionId === '.' || sessionId === '..') return `/?session=${encodeURIComponent(sessionId)}`;
  return `/sessions/${encodeURIComponent(sessionId)}`;
}

function safeDecode(text) {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
