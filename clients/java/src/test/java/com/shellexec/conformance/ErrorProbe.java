package com.shellexec.conformance;

import com.shellexec.client.ShellExecClient;
import com.shellexec.client.ShellExecException;
import com.shellexec.v1.Session;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * Makes calls that fail in known ways and prints what the Java client reports of each, one line
 * per step: {@code <step> OK} or {@code <step> <gRPC code> <ErrorInfo reason or ResourceInfo
 * type, or ->}. {@code ErrorProbe <host:port> [token]}; stops after the first failed step that
 * should have succeeded. Without a token it passes null, as {@code System.getenv} gives for an
 * unset variable. tests/clients/test_conformance_java.py checks the lines.
 */
public final class ErrorProbe {
  private static final String UNKNOWN_SESSION = "ses_" + "0".repeat(32);

  private ErrorProbe() {}

  public static void main(String[] args) {
    String token = args.length > 1 ? args[1] : null;
    try (ShellExecClient client = ShellExecClient.builder(args[0]).token(token).build()) {
      Session session = step("create_session", () -> client.createSession(
          "probe-java-" + UUID.randomUUID().toString().substring(0, 8), "codex", ""));
      if (session == null) {
        return;
      }
      String id = session.getId();
      step("start_turn", () -> client.startTurn(id, ""));
      step("start_turn_again", () -> client.startTurn(id, ""));
      step("publish", () -> client.publish(id, chunk("first"), 1L));
      step("publish_other_update_same_sequence", () -> client.publish(id, chunk("second"), 1L));
      step("get_unknown_session", () -> client.getSession(UNKNOWN_SESSION));
    }
  }

  private static Map<String, Object> chunk(String text) {
    return Map.of("sessionUpdate", "agent_message_chunk",
        "content", Map.of("type", "text", "text", text));
  }

  private static <T> T step(String name, Supplier<T> call) {
    try {
      T answer = call.get();
      System.out.println(name + " OK");
      return answer;
    } catch (ShellExecException error) {
      String detail = !error.reason().isEmpty() ? error.reason()
          : !error.resourceType().isEmpty() ? error.resourceType() : "-";
      System.out.println(name + " " + error.code() + " " + detail);
      return null;
    }
  }
}
