package com.shellexec.conformance;

import com.shellexec.client.Feed;
import com.shellexec.client.ShellExecClient;
import com.shellexec.client.ShellExecException;
import com.shellexec.v1.Session;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;

/**
 * What the client does beyond single calls, one line per step.
 * {@code ClientProbe <host:port> <token> [trusted-certificates.pem]}: a negative timeout is
 * refused by the builder ({@code negative_timeout <message>}), and the client runs with none
 * ({@code timeout(null)}, which failed at the first call). With a certificate file,
 * the client speaks TLS checked against it ({@code tls <session id prefix>}); then it closes
 * itself with a feed still open, which ends the feed as cancelled, at once
 * ({@code feed_after_close CANCELLED}). tests/clients/test_conformance_java.py checks the lines.
 */
public final class ClientProbe {
  private ClientProbe() {}

  public static void main(String[] args) {
    try {
      ShellExecClient.builder(args[0]).timeout(Duration.ofSeconds(-1));
      System.out.println("negative_timeout accepted");
    } catch (IllegalArgumentException refused) {
      System.out.println("negative_timeout " + refused.getMessage());
    }
    ShellExecClient.Builder builder = ShellExecClient.builder(args[0]).token(args[1])
        .timeout(null);
    if (args.length > 2) {
      builder.tls(Path.of(args[2]));
    }
    Feed feed;
    try (ShellExecClient client = builder.build()) {
      Session session = client.createSession(
          "probe-java-client-" + UUID.randomUUID().toString().substring(0, 8), "codex", "");
      if (args.length > 2) {
        System.out.println("tls " + session.getId().substring(0, 4));
      }
      feed = client.watch(session.getId(), null);
      feed.next();  // the first heartbeat: the stream is open
    }
    try {
      feed.hasNext();
      System.out.println("feed_after_close still open");
    } catch (ShellExecException error) {
      System.out.println("feed_after_close " + error.code());
    }
  }
}
