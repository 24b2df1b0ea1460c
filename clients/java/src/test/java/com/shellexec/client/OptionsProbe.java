package com.shellexec.client;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What the builder refuses, and how the client bounds its reconnects, without a server; one
 * line per step. {@code OptionsProbe}: a token no header can carry is refused by
 * {@code token(...)} ({@code refused <message>}; grpc-java dropped it with a warning, and the
 * service answered UNAUTHENTICATED), the longest token and none are taken
 * ({@code token_taken <how>}); a built client checks its channel every
 * {@code reconnect_every <period>} and stops when closed ({@code reconnect_stopped true}), and a
 * check cuts the backoff short in TRANSIENT_FAILURE alone ({@code reconnect_reset <states>}),
 * and the shared thread that checks runs while a client is open and ends once none is
 * ({@code reconnect_thread_while_open true}, {@code reconnect_thread_once_closed false}).
 * tests/clients/test_conformance_java.py checks the lines.
 */
public final class OptionsProbe {
  static final String SECRET = "shx_Secret0123456789";

  private OptionsProbe() {}

  public static void main(String[] args) {
    for (String token : List.of(SECRET + "\n", SECRET + "\r\n", "Bearer " + SECRET,
        SECRET + "\t", SECRET + "\0x", SECRET + "\u007f", SECRET + "\u00e9" + SECRET,
        SECRET + "\uD83D\uDE00", SECRET + "x".repeat(257 - SECRET.length()))) {
      try {
        ShellExecClient.builder("127.0.0.1:9").token(token);
        System.out.println("taken");
      } catch (IllegalArgumentException refused) {
        System.out.println("refused " + refused.getMessage());
      }
    }
    ShellExecClient.builder("127.0.0.1:9").token("x".repeat(256));
    System.out.println("token_taken 256");
    ShellExecClient.builder("127.0.0.1:9").token("");
    ShellExecClient.builder("127.0.0.1:9").token(null);
    System.out.println("token_taken none");

    ManualTimer timer = new ManualTimer();
    try (ShellExecClient client = ShellExecClient.builder("127.0.0.1:9")
        .reconnectTimer(timer).build()) {
      System.out.println("reconnect_every " + timer.period);
    }
    System.out.println("reconnect_stopped " + timer.stopped);

    StateChannel channel = new StateChannel();
    List<ConnectivityState> reset = new ArrayList<>();
    for (ConnectivityState state : ConnectivityState.values()) {
      channel.state = state;
      int before = channel.resets;
      ReconnectBound.check(channel);
      if (channel.resets > before) {
        reset.add(state);
      }
    }
    System.out.println("reconnect_reset " + reset);

    try (ShellExecClient client = ShellExecClient.builder("127.0.0.1:9").build()) {
      System.out.println("reconnect_thread_while_open " + reconnectThreadRuns());
    }
    System.out.println("reconnect_thread_once_closed " + waitForReconnectThreadEnd());
  }

  private static boolean reconnectThreadRuns() {
    return Thread.getAllStackTraces().keySet().stream()
        .anyMatch(thread -> thread.getName().equals(ReconnectBound.THREAD_NAME));
  }

  /** Whether the shared thread runs still, after a bounded wait for it to end (it ends
   * {@link ReconnectBound#THREAD_IDLE} after the last client closed). */
  private static boolean waitForReconnectThreadEnd() {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (reconnectThreadRuns() && System.nanoTime() < deadline) {
      try {
        Thread.sleep(50);
      } catch (InterruptedException interrupted) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    return reconnectThreadRuns();
  }

  /** A clock the probe reads instead of waiting on it. */
  static final class ManualTimer implements ReconnectBound.Timer {
    Duration period;
    boolean stopped;

    @Override
    public Runnable every(Duration period, Runnable task) {
      this.period = period;
      return () -> stopped = true;
    }
  }

  /** A channel in the state it is told, counting the resets of its backoff. */
  static final class StateChannel extends ManagedChannel {
    ConnectivityState state = ConnectivityState.IDLE;
    int resets;

    @Override
    public ConnectivityState getState(boolean requestConnection) {
      return state;
    }

    @Override
    public void resetConnectBackoff() {
      resets += 1;
    }

    @Override
    public ManagedChannel shutdown() {
      return this;
    }

    @Override
    public boolean isShutdown() {
      return false;
    }

    @Override
    public boolean isTerminated() {
      return false;
    }

    @Override
    public ManagedChannel shutdownNow() {
      return this;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
      return true;
    }

    @Override
    public <RequestT, ResponseT> ClientCall<RequestT, ResponseT> newCall(
        MethodDescriptor<RequestT, ResponseT> method, CallOptions options) {
      throw new UnsupportedOperationException("no calls");
    }

    @Override
    public String authority() {
      return "127.0.0.1:9";
    }
  }
}
