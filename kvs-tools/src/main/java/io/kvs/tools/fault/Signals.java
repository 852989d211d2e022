package io.kvs.tools.fault;

import java.io.IOException;

/**
 * SIGSTOP and SIGCONT, which the JDK has no call for, through {@code kill(1)}. (SIGKILL is {@link
 * ProcessHandle#destroyForcibly()}.)
 */
public final class Signals {
  private Signals() {}

  /** Pauses {@code process} (SIGSTOP): it keeps its sockets but runs nothing. */
  public static void stop(ProcessHandle process) throws IOException {
    signal(process, "STOP");
  }

  /** Resumes a paused {@code process} (SIGCONT). */
  public static void resume(ProcessHandle process) throws IOException {
    signal(process, "CONT");
  }

  private static void signal(ProcessHandle process, String signal) throws IOException {
    SystemCommand.require("kill", "-s", signal, Long.toString(process.pid()));
  }
}
