package com.shellexec.client;

import com.google.protobuf.Value;
import com.shellexec.v1.ShellOutput;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Text UTF-8 cannot carry is refused before anything is sent, without a server; one line per
 * step. {@code TextProbe}: a lone surrogate in an update (a map, a given Value, JSON text with a
 * {@code "\ud800"} escape), a normalized update or a string argument (task id, output to
 * summarize, session id to watch) is refused with an {@link IllegalArgumentException} naming
 * where it is and what is wrong ({@code refused <message>}); protobuf wrote each as {@code ?},
 * and the service stored the text changed. A call sent would fail UNAVAILABLE: the target is
 * never reached ({@code sent <code>}). Paired surrogates are taken ({@code taken <text>}).
 * tests/clients/test_conformance_java.py checks the lines.
 */
public final class TextProbe {
  private TextProbe() {}

  private static Map<String, Object> chat(Object text) {
    return Map.of("sessionUpdate", "agent_message_chunk",
        "content", Map.of("type", "text", "text", text));
  }

  private static void step(Supplier<Object> call) {
    try {
      Object result = call.get();
      Value text = result instanceof Value value
          ? value.getStructValue().getFieldsOrDefault("text", Value.getDefaultInstance()) : null;
      System.out.println("taken " + (text == null ? result.getClass().getSimpleName()
          : text.getStringValue().codePoints().mapToObj(c -> String.format("U+%04X", c))
              .toList()));
    } catch (IllegalArgumentException refused) {
      System.out.println("refused " + refused.getMessage());
    } catch (ShellExecException sent) {
      System.out.println("sent " + sent.code());
    }
  }

  public static void main(String[] args) {
    try (ShellExecClient client = ShellExecClient.builder("127.0.0.1:9")
        .timeout(Duration.ofSeconds(5)).build()) {
      step(() -> client.publish("ses_1", chat("lone \uD800 high"), 1L));
      step(() -> client.publish("ses_1", Map.of("sessionUpdate", "plan",
          "entries", List.of("ok", List.of("x\uDC00"))), null));
      step(() -> client.publish("ses_1",
          Value.newBuilder().setStringValue("reversed \uDE00\uD83D").build(), null));
      step(() -> client.publish("ses_1", Map.of("odd key", Map.of("k\uD800", 1)), null));
      step(() -> client.normalize(List.of(chat("fine"), chat("\uD800")), "", false));
      step(() -> client.createSession("task-\uD800", "", ""));
      step(() -> client.summarize(ShellOutput.newBuilder().setStdout("ok \uDBFF x").build()));
      step(() -> client.watch("ses_\uD800", 0));
      step(() -> Values.of(chat(List.of("\uD800"))));
      step(() -> Values.ofJson("{\"content\": {\"text\": \"lone \\ud800 x\"}}"));
      step(() -> Values.ofJson("{\"text\": \"\\ud83d\\ude00 \\ufffd\"}"));
      step(() -> Values.of(Map.of("text", "\uD83D\uDE00 \uFFFD")));
    }
  }
}
