package io.kvs.client;

/**
 * How one round of an operation ended.
 *
 * @param kind done, go on, or retry
 * @param problem for {@link Kind#RETRY}: why
 * @param progressed whether the round got part of the work done (restarts the timeout)
 */
record Step(Kind kind, Problem problem, boolean progressed) {
  /** How a round ended. */
  enum Kind {
    /** The operation is complete. */
    DONE,
    /** Part of it is done; run the next round now. */
    CONTINUE,
    /** An attempt did not get through; retry after a refresh or a backoff. */
    RETRY
  }

  static final Step DONE = new Step(Kind.DONE, null, true);
  static final Step CONTINUE = new Step(Kind.CONTINUE, null, true);

  static Step retry(Problem problem, boolean progressed) {
    return new Step(Kind.RETRY, problem, progressed);
  }
}
