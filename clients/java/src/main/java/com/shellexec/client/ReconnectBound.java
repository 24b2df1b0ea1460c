package com.shellexec.client;

import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Bounds the wait of a channel's reconnects after an outage. grpc-java's backoff grows to two
 * minutes, and no builder option of grpc-java 1.85 changes it, so a client kept failing
 * UNAVAILABLE for up to ~17 s (longer after a longer outage) once the service was back. While
 * the channel is in TRANSIENT_FAILURE (its last attempt to connect failed, and it waits to try
 * again), this tells it every period to try again at once
 * ({@link ManagedChannel#resetConnectBackoff()}, grpc-java's public way to cut the wait short).
 */
final class ReconnectBound {
  /** Runs a task every period until the returned handle is run; tests give their own clock. */
  @FunctionalInterface
  interface Timer {
    Runnable every(Duration period, Runnable task);
  }

  // Before SHARED, which reads them as it is made.
  /** How long the shared thread stays once no client is open. */
  static final Duration THREAD_IDLE = Duration.ofSeconds(1);

  /** The shared thread's name. */
  static final String THREAD_NAME = "shellexec-reconnect-bound";

  /** One daemon thread for every client of the process while one is open: a look at a
   * channel's state every few seconds costs nothing. */
  static final Timer SHARED = new Timer() {
    private final ScheduledThreadPoolExecutor executor = executor();

    @Override
    public Runnable every(Duration period, Runnable task) {
      ScheduledFuture<?> scheduled = executor.scheduleWithFixedDelay(
          task, period.toNanos(), period.toNanos(), TimeUnit.NANOSECONDS);
      return () -> scheduled.cancel(false);
    }
  };

  private ReconnectBound() {}

  /** Starts bounding {@code channel}'s reconnects to one every {@code period}; the handle
   * returned stops it. */
  static Runnable start(ManagedChannel channel, Duration period, Timer timer) {
    return timer.every(period, () -> check(channel));
  }

  /** Cuts the channel's wait for its next attempt short if it waits after a failed one. */
  static void check(ManagedChannel channel) {
    if (channel.getState(false) == ConnectivityState.TRANSIENT_FAILURE) {
      channel.resetConnectBackoff();
    }
  }

  private static ScheduledThreadPoolExecutor executor() {
    ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, task -> {
      Thread thread = new Thread(task, THREAD_NAME);
      thread.setDaemon(true);
      return thread;
    });
    executor.setRemoveOnCancelPolicy(true);  // a closed client leaves nothing behind
    // Once no client is open (nothing is scheduled), the thread ends: a program run by a host
    // that waits for its threads (Maven's exec:java waited 15 s, then warned) ends at once.
    // A thread that would time out keeps running while a task is scheduled.
    executor.setKeepAliveTime(THREAD_IDLE.toMillis(), TimeUnit.MILLISECONDS);
    executor.allowCoreThreadTimeOut(true);
    return executor;
  }
}
