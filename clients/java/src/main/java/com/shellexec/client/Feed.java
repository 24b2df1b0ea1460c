package com.shellexec.client;

import com.shellexec.v1.WatchMessagesResponse;
import io.grpc.Context;
import io.grpc.StatusRuntimeException;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.function.Consumer;

/**
 * A session's feed: iterate its events; {@link #close()} cancels the stream. It ends by itself
 * after {@code end_of_stream}, {@code session_deleted} or {@code reset}. A failed stream throws
 * {@link ShellExecException} from {@link #hasNext()} or {@link #next()}.
 */
public final class Feed implements Iterator<WatchMessagesResponse>, AutoCloseable {
  private final Context.CancellableContext context;
  private final Iterator<WatchMessagesResponse> events;
  private final Consumer<Feed> onClose;

  Feed(Context.CancellableContext context, Iterator<WatchMessagesResponse> events,
       Consumer<Feed> onClose) {
    this.context = context;
    this.events = events;
    this.onClose = onClose;
  }

  @Override
  public boolean hasNext() {
    try {
      boolean more = events.hasNext();
      if (!more) {
        close();  // ended by the server: its context goes too, close() called or not
      }
      return more;
    } catch (StatusRuntimeException error) {
      close();
      throw ShellExecException.from(error);
    }
  }

  @Override
  public WatchMessagesResponse next() {
    if (!hasNext()) {
      throw new NoSuchElementException("the feed has ended");
    }
    try {
      return events.next();
    } catch (StatusRuntimeException error) {
      throw ShellExecException.from(error);
    }
  }

  /** Cancels the stream; the server sees the watcher go. Closing the client closes it too. */
  @Override
  public void close() {
    context.cancel(null);
    onClose.accept(this);
  }
}
