// What the top bar says about a session (pure): its id, then its agent and task when named.

/**
 * The header parts of `session`, in display order: `{kind: 'id' | 'agent' | 'task', text}`.
 * A missing, `null`, blank or non-string agent or task id gives no part at all: a session
 * created without an agent shows no agent rather than a placeholder word.
 */
export function sessionHeaderParts(session) {
  const parts = [{ kind: 'id', text: String(session.id) }];
  const agent = nameOf(session.agent);
  if (agent !== null) parts.push({ kind: 'agent', text: agent });
  const taskId = nameOf(session.task_id);
  if (taskId !== null) parts.push({ kind: 'task', text: taskId });
  return parts;
}

function nameOf(value) {
  return typeof value === 'string' && value.trim() !== '' ? value : null;
}
