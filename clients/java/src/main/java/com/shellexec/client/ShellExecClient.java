package com.shellexec.client;

import com.shellexec.v1.BootState;
import com.shellexec.v1.CompleteTurnRequest;
import com.shellexec.v1.CompleteTurnResponse;
import com.shellexec.v1.CreateSessionRequest;
import com.shellexec.v1.DeleteSessionRequest;
import com.shellexec.v1.DeleteTaskRequest;
import com.shellexec.v1.GetBootStateRequest;
import com.shellexec.v1.GetSessionRequest;
import com.shellexec.v1.GetShellOutputRequest;
import com.shellexec.v1.GetShellOutputResponse;
import com.shellexec.v1.ListMessagesRequest;
import com.shellexec.v1.ListMessagesResponse;
import com.shellexec.v1.ListSessionsRequest;
import com.shellexec.v1.ListSessionsResponse;
import com.shellexec.v1.Message;
import com.shellexec.v1.NormalizeShellExecRequest;
import com.shellexec.v1.NormalizeShellExecResponse;
import com.shellexec.v1.PublishUpdateRequest;
import com.shellexec.v1.PublishUpdateResponse;
import com.shellexec.v1.Session;
import com.shellexec.v1.ShellExecServiceGrpc;
import com.shellexec.v1.ShellOutput;
import com.shellexec.v1.ShellOutputSummary;
import com.shellexec.v1.StartTurnRequest;
import com.shellexec.v1.SummarizeShellOutputRequest;
import com.shellexec.v1.Turn;
import com.shellexec.v1.WatchMessagesRequest;
import com.shellexec.v1.WatchMessagesResponse;
import io.grpc.Channel;
import io.grpc.ChannelCredentials;
import io.grpc.ClientInterceptors;
import io.grpc.Context;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Blocking calls to a shellexec server, straight or through its Envoy front door.
 *
 * <p>ACP updates are plain Java values (maps, lists, strings, numbers, booleans, null; see
 * {@link Values}). A failed call throws {@link ShellExecException} with the gRPC code and the
 * {@code ErrorInfo} reason. A request holding text UTF-8 cannot carry (a lone surrogate, in an
 * update or a string argument) is refused before it is sent, with an
 * {@link IllegalArgumentException} naming where the text is and what is wrong.
 *
 * <pre>{@code
 * try (ShellExecClient client = ShellExecClient.builder("127.0.0.1:50051").build()) {
 *   Session session = client.createSession("task-1", "codex", "");
 * }
 * }</pre>
 */
public final class ShellExecClient implements AutoCloseable {
  /** The gRPC message limit of docs/api.md ("Limits"), both ways. */
  public static final int MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

  /** The longest bearer token the service takes (docs/api.md, "Limits"). */
  public static final int MAX_BEARER_TOKEN_CHARS = 256;

  /**
   * The longest wait between two attempts to reconnect after an outage. grpc-java's own backoff
   * grows to two minutes, and grpc-java 1.85 has no option to bound it: while the channel waits
   * after a failed attempt, the client cuts the wait short this often. The Go and Python
   * clients bound it alike.
   */
  public static final Duration MAX_RECONNECT_DELAY = Duration.ofSeconds(5);

  private static final int ALL_PAGES_LIMIT = 500;

  private final ManagedChannel channel;
  private final ShellExecServiceGrpc.ShellExecServiceBlockingStub stub;
  private final Duration timeout;
  private final Set<Feed> openFeeds = ConcurrentHashMap.newKeySet();
  private final Runnable stopBoundingReconnects;

  private ShellExecClient(ManagedChannel channel, String token, Duration timeout,
      ReconnectBound.Timer reconnectTimer) {
    Channel calls = token.isEmpty() ? channel : ClientInterceptors.intercept(channel,
        new BearerToken(token));
    this.channel = channel;
    this.stub = ShellExecServiceGrpc.newBlockingStub(calls);
    this.timeout = timeout;
    this.stopBoundingReconnects =
        ReconnectBound.start(channel, MAX_RECONNECT_DELAY, reconnectTimer);
  }

  /** A client of the server at {@code target} ({@code host:port}; plaintext unless
   * {@link Builder#tls()}). */
  public static Builder builder(String target) {
    return new Builder(target);
  }

  /** The folded record of one tool call's updates; nothing is stored. */
  public NormalizeShellExecResponse normalize(List<?> updates, String agent,
      boolean maskSecrets) {
    NormalizeShellExecRequest.Builder request = NormalizeShellExecRequest.newBuilder()
        .setAgent(agent).setMaskSecrets(maskSecrets);
    updates.forEach(update -> request.addUpdates(Values.convert(update)));
    return call(() -> unary().normalizeShellExec(refused(request.build())));
  }

  /** The browser-facing summary of a full output. */
  public ShellOutputSummary summarize(ShellOutput output) {
    SummarizeShellOutputRequest request =
        SummarizeShellOutputRequest.newBuilder().setOutput(output).build();
    return call(() -> unary().summarizeShellOutput(refused(request)).getSummary());
  }

  /**
   * Creates a session; pass the same {@code requestId} on every retry of one call so that a
   * lost answer creates no second session ("" for none).
   */
  public Session createSession(String taskId, String agent, String requestId) {
    CreateSessionRequest request = CreateSessionRequest.newBuilder()
        .setTaskId(taskId).setAgent(agent).setRequestId(requestId).build();
    return call(() -> unary().createSession(refused(request)).getSession());
  }

  public Session getSession(String sessionId) {
    GetSessionRequest request = GetSessionRequest.newBuilder().setSessionId(sessionId).build();
    return call(() -> unary().getSession(refused(request)).getSession());
  }

  /**
   * Starts a turn; pass the same {@code requestId} on every retry of one call so that a lost
   * answer starts no second turn ("" for none).
   */
  public Turn startTurn(String sessionId, String requestId) {
    StartTurnRequest request = StartTurnRequest.newBuilder()
        .setSessionId(sessionId).setRequestId(requestId).build();
    return call(() -> unary().startTurn(refused(request)).getTurn());
  }

  /**
   * Publishes one ACP update (a plain map, or JSON text through {@link Values#ofJson}); with a
   * {@code sequence} (null for none) a retry comes back with {@code duplicate} set.
   */
  public PublishUpdateResponse publish(String sessionId, Object update, Long sequence) {
    PublishUpdateRequest.Builder request = PublishUpdateRequest.newBuilder()
        .setSessionId(sessionId).setUpdate(Values.convert(update));
    if (sequence != null) {
      request.setSequence(sequence);
    }
    return call(() -> unary().publishUpdate(refused(request.build())));
  }

  public CompleteTurnResponse completeTurn(String sessionId, String turnId, String stopReason) {
    CompleteTurnRequest request = CompleteTurnRequest.newBuilder()
        .setSessionId(sessionId).setTurnId(turnId).setStopReason(stopReason).build();
    return call(() -> unary().completeTurn(refused(request)));
  }

  /** One page of messages: {@code limit} 0 for the default; "" for no cursor or sort. */
  public ListMessagesResponse listMessages(String sessionId, int limit, String before,
      String after, String sort) {
    ListMessagesRequest request = ListMessagesRequest.newBuilder().setSessionId(sessionId)
        .setLimit(limit).setBefore(before).setAfter(after).setSort(sort).build();
    return call(() -> unary().listMessages(refused(request)));
  }

  /** Every message of the session, oldest first (follows the pages). */
  public List<Message> messages(String sessionId) {
    List<Message> found = new ArrayList<>();
    String cursor = "";
    while (true) {
      ListMessagesResponse page = listMessages(sessionId, ALL_PAGES_LIMIT, "", cursor, "");
      found.addAll(page.getMessagesList());
      if (!page.getHasMore()) {
        return found;
      }
      cursor = page.getCursor();
    }
  }

  /**
   * One page of the sessions the caller may see, by creation: {@code limit} 0 for the default;
   * "" for no cursor (a session id) or sort.
   */
  public ListSessionsResponse listSessions(int limit, String before, String after, String sort) {
    ListSessionsRequest request = ListSessionsRequest.newBuilder()
        .setLimit(limit).setBefore(before).setAfter(after).setSort(sort).build();
    return call(() -> unary().listSessions(refused(request)));
  }

  public GetShellOutputResponse shellOutput(String sessionId, String messageId) {
    GetShellOutputRequest request = GetShellOutputRequest.newBuilder()
        .setSessionId(sessionId).setMessageId(messageId).build();
    return call(() -> unary().getShellOutput(refused(request)));
  }

  public BootState bootState(String taskId) {
    GetBootStateRequest request = GetBootStateRequest.newBuilder().setTaskId(taskId).build();
    return call(() -> unary().getBootState(refused(request)).getInitialState());
  }

  /** Deletes the session with its messages, output and feed (needs the {@code admin} scope). */
  public void deleteSession(String sessionId) {
    DeleteSessionRequest request =
        DeleteSessionRequest.newBuilder().setSessionId(sessionId).build();
    call(() -> unary().deleteSession(refused(request)));
  }

  /** Deletes the task with all its sessions; returns the deleted sessions' ids. */
  public List<String> deleteTask(String taskId) {
    DeleteTaskRequest request = DeleteTaskRequest.newBuilder().setTaskId(taskId).build();
    return call(() ->
        List.copyOf(unary().deleteTask(refused(request)).getDeletedSessionIdsList()));
  }

  /**
   * The session's feed: every event after {@code sinceRevision} (null: live events only), then
   * live ones. No deadline: close the feed to stop watching.
   */
  public Feed watch(String sessionId, Integer sinceRevision) {
    WatchMessagesRequest.Builder request =
        WatchMessagesRequest.newBuilder().setSessionId(sessionId);
    if (sinceRevision != null) {
      request.setSinceRevision(sinceRevision);
    }
    WatchMessagesRequest opening = refused(request.build());
    Context.CancellableContext context = Context.current().withCancellation();
    Iterator<WatchMessagesResponse> events =
        call(() -> context.wrap(() -> stub.watchMessages(opening)).call());
    Feed feed = new Feed(context, events, openFeeds::remove);
    openFeeds.add(feed);
    return feed;
  }

  /** Closes the feeds still open, then the channel, waiting a few seconds for unary calls in
   * flight. (A feed left open held the channel for the whole wait.) */
  @Override
  public void close() {
    for (Feed feed : List.copyOf(openFeeds)) {
      feed.close();
    }
    stopBoundingReconnects.run();
    channel.shutdown();
    try {
      channel.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException interrupted) {
      Thread.currentThread().interrupt();
    } finally {
      channel.shutdownNow();
    }
  }

  private ShellExecServiceGrpc.ShellExecServiceBlockingStub unary() {
    if (timeout.isZero()) {
      return stub;
    }
    return stub.withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  /**
   * {@code request}, once its text is known to be UTF-8 ({@link Text}): a string or key holding
   * a lone surrogate is refused with an {@link IllegalArgumentException} naming where it is.
   */
  private static <T extends com.google.protobuf.MessageOrBuilder> T refused(T request) {
    Text.refuse(request);
    return request;
  }

  private static <T> T call(Callable<T> body) {
    try {
      return body.call();
    } catch (StatusRuntimeException error) {
      throw ShellExecException.from(error);
    } catch (RuntimeException error) {
      throw error;
    } catch (Exception error) {
      throw new IllegalStateException(error);
    }
  }

  /** A call that may throw what {@code Context.wrap(...).call()} declares. */
  @FunctionalInterface
  private interface Callable<T> {
    T call() throws Exception;
  }

  /** How to reach the server: its address, an optional bearer token and a call timeout. */
  public static final class Builder {
    private final String target;
    private String token = "";
    private Duration timeout = Duration.ofSeconds(30);
    private ChannelCredentials credentials = InsecureChannelCredentials.create();
    private ReconnectBound.Timer reconnectTimer = ReconnectBound.SHARED;

    private Builder(String target) {
      this.target = target;
    }

    /**
     * Sends {@code authorization: Bearer <token>} with every call ("" or null for none, so
     * {@code System.getenv("SHELLEXEC_TOKEN")} may be passed as it is). A token no header can
     * carry (more than {@link ShellExecClient#MAX_BEARER_TOKEN_CHARS} characters, or any but
     * visible ASCII, such as a line feed read with it from a file) is refused here, with an
     * {@link IllegalArgumentException} saying what is wrong and never what the token is:
     * grpc-java dropped it with a warning, and the service answered UNAUTHENTICATED.
     */
    public Builder token(String token) {
      String given = token == null ? "" : token;
      String problem = given.isEmpty() ? null : BearerToken.problem(given);
      if (problem != null) {
        throw new IllegalArgumentException("token " + problem + ": a token is at most "
            + MAX_BEARER_TOKEN_CHARS + " visible ASCII characters");
      }
      this.token = given;
      return this;
    }

    /** The deadline of each unary call (default 30 s); null or zero for none, as in the Go
     * client; feeds have none. A negative timeout is refused here, not at the first call. */
    public Builder timeout(Duration timeout) {
      if (timeout != null && timeout.isNegative()) {
        throw new IllegalArgumentException("timeout: must not be negative, got " + timeout);
      }
      this.timeout = timeout == null ? Duration.ZERO : timeout;
      return this;
    }

    /** TLS, checked against the system's trusted certificates (a front door with
     * {@code SHELLEXEC_TLS_CERT_FILE}). */
    public Builder tls() {
      this.credentials = TlsChannelCredentials.create();
      return this;
    }

    /** TLS, checked against the PEM certificates in {@code trustedCertificates} only (a
     * self-signed front door: its certificate file). */
    public Builder tls(Path trustedCertificates) {
      try {
        this.credentials = TlsChannelCredentials.newBuilder()
            .trustManager(trustedCertificates.toFile()).build();
      } catch (IOException error) {
        throw new UncheckedIOException(error);
      }
      return this;
    }

    /** The clock of the reconnect bound, for tests. */
    Builder reconnectTimer(ReconnectBound.Timer timer) {
      this.reconnectTimer = timer;
      return this;
    }

    /** The client, on a channel that tries to reconnect after an outage at least every
     * {@link ShellExecClient#MAX_RECONNECT_DELAY}. */
    public ShellExecClient build() {
      ManagedChannel channel = Grpc.newChannelBuilder(target, credentials)
          .maxInboundMessageSize(MAX_MESSAGE_BYTES).build();
      try {
        return new ShellExecClient(channel, token, timeout, reconnectTimer);
      } catch (RuntimeException | Error error) {
        // No one else holds the channel: left open, its threads outlive the failed build.
        channel.shutdownNow();
        throw error;
      }
    }
  }
}
