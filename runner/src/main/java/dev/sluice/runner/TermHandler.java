package dev.sluice.runner;

/**
 * The runner's one SIGTERM handler, installed as soon as the status file says STARTING: a TERM
 * that arrives before Kafka Streams starts (during the JVM's start or the identity gate — a
 * Docker daemon shutting down, an operator's stop) closes the runner cleanly with nothing
 * processed, recorded as CLOSED (143); once {@link #install} hands it the Streams close, a TERM
 * runs that close instead. Without it a TERM before the Streams hook existed left STARTING behind
 * and exit 143 — an exit code alone, which sluice never accepts as a clean close.
 */
final class TermHandler {
  private Runnable action;
  private boolean fired;

  TermHandler(Runnable beforeStreams) {
    this.action = beforeStreams;
  }

  /**
   * Hands the handler the Streams close; false when a TERM already arrived (the caller must not
   * start Streams: the JVM is exiting with the early close recorded).
   */
  synchronized boolean install(Runnable onTerm) {
    if (fired) return false;
    action = onTerm;
    return true;
  }

  /** Runs the current action once (the shutdown hook). */
  void fire() {
    Runnable a;
    synchronized (this) {
      if (fired) return;
      fired = true;
      a = action;
    }
    a.run();
  }

  /** Registers {@link #fire} as a JVM shutdown hook. */
  static TermHandler register(StatusFile status) {
    TermHandler h = new TermHandler(() -> status.write("CLOSED", 143, "SIGTERM",
        "TERM before Kafka Streams started: nothing was processed"));
    Runtime.getRuntime().addShutdownHook(new Thread(h::fire, "sluice-sigterm"));
    return h;
  }
}
