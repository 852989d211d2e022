package io.kvs.tools.demo;

import io.kvs.client.KvsClient;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/** Writes version 0 of every key, asynchronously, with a bounded number of writes in flight. */
final class Loader {
  private final KvsClient client;
  private final Expected expected;
  private final int window;
  final AtomicLong done = new AtomicLong();
  final AtomicLong errors = new AtomicLong();
  final AtomicLong bytes = new AtomicLong();
  final AtomicReference<String> firstError = new AtomicReference<>();

  Loader(KvsClient client, Expected expected, int window) {
    this.client = client;
    this.expected = expected;
    this.window = window;
  }

  /** Writes every key; returns when all writes completed (acknowledged or failed). */
  void run() throws InterruptedException {
    Semaphore inFlight = new Semaphore(window);
    for (int i = 0; i < expected.keys(); i++) {
      inFlight.acquire();
      int key = i;
      byte[] value = DemoData.value(key, 0);
      client
          .putAsync(DemoData.key(key), value)
          .whenComplete(
              (ok, error) -> {
                if (error == null) {
                  expected.written(key, 0);
                  bytes.addAndGet(value.length);
                } else {
                  expected.failed(key, 0);
                  errors.incrementAndGet();
                  firstError.compareAndSet(
                      null,
                      (error instanceof CompletionException && error.getCause() != null
                              ? error.getCause()
                              : error)
                          .toString());
                }
                done.incrementAndGet();
                inFlight.release();
              });
    }
    inFlight.acquire(window); // every write completed; their effects are visible from here
  }
}
