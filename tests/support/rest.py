"""The shipped REST helper (`shellexec.demo.rest`) and what only tests add to it."""

from __future__ import annotations

import uuid

from shellexec.demo.rest import JsonObject, RestApi


def unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


class Api(RestApi):
    """The public REST API through Envoy: sessions on fresh task ids, a tool call played in
    one go, the whole message list."""

    def new_session(self, agent: str | None = "codex", task_id: str | None = None) -> JsonObject:
        """A new session; `agent=None` leaves the field out of the request."""
        return self.create_session(task_id or unique("task"), agent)

    def play(self, session_id: str, updates: list[JsonObject]) -> str:
        """Publishes a tool call's updates in order; returns its message id."""
        message_id = ""
        for update in updates:
            message = self.publish(session_id, update).get("message") or {}
            message_id = str(message.get("id") or message_id)
        assert message_id, "no message for these updates"
        return message_id

    def shell_exec(self, session_id: str, message_id: str) -> JsonObject:
        """The `shell_exec` summary of a message, as the message list carries it."""
        listed = {message["id"]: message for message in self.messages(session_id)}
        summary: JsonObject = listed[message_id]["metadata"]["normalized"]["shell_exec"]
        return summary

    def messages(self, session_id: str) -> list[JsonObject]:
        found: list[JsonObject] = self.list_messages(session_id, "?limit=500")["messages"]
        return found
