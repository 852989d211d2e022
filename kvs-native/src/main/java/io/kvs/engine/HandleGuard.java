package io.kvs.engine;

import io.kvs.core.ClosedException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Keeps a native handle alive while calls use it: each call {@link #enter()}s and {@link #exit()}s;
 * {@link #close()} refuses new calls and waits for running ones, so native memory is never freed
 * under a running call. One atomic add per call.
 */
final class HandleGuard {
  private static final long CLOSED = 1L << 62;

  private final String what;
  private final AtomicLong state = new AtomicLong();

  HandleGuard(String what) {
    this.what = what;
  }

  /** Registers a call; throws {@link ClosedException} if closed. Pair with {@link #exit()}. */
  void enter() {
    if ((state.incrementAndGet() & CLOSED) != 0) {
      state.decrementAndGet();
      throw new ClosedException(what + " is closed");
    }
  }

  void exit() {
    state.decrementAndGet();
  }

  /** Refuses new calls and waits for running ones; returns false if already closed. */
  boolean close() {
    long current;
    do {
      current = state.get();
      if ((current & CLOSED) != 0) {
        return false;
      }
    } while (!state.compareAndSet(current, current | CLOSED));
    while ((state.get() & ~CLOSED) != 0) {
      LockSupport.parkNanos(10_000);
    }
    return true;
  }

  boolean isClosed() {
    return (state.get() & CLOSED) != 0;
  }
}
