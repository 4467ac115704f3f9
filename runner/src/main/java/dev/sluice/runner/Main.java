package dev.sluice.runner;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.NoOffsetForPartitionException;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.slf4j.LoggerFactory;

/**
 * The runner's entry point (ENTRYPOINT of the image). Modes:
 *
 * <ul>
 *   <li>{@code run} (default): load and check the plan, run the identity gate, run the topology
 *       until SIGTERM (exit 143) or a fatal error (exit 10–15 with a one-line JSON reason);
 *   <li>{@code init-offsets}: load the plan, run the identity gate and set the group's committed
 *       offset to the artifact's {@code initial_offsets} for every input partition that has
 *       none (never moves an existing offset). Exit 0 on success;
 *   <li>{@code cds-training}: the image build's class-data-sharing training run
 *       ({@link CdsTraining}); never used at run time.
 * </ul>
 *
 * <p>Environment: SLUICE_PLAN_PATH (default /etc/sluice/plan.json), SLUICE_PLAN_SHA256,
 * SLUICE_GENERATION, SLUICE_DATA_DIR (default /var/lib/sluice), SLUICE_CLOSE_TIMEOUT_MS (default
 * 20000), SLUICE_LEAVE_MODE (internal | static | none; default internal, see docs/runner.md),
 * SLUICE_KAFKA_CLIENT_PATH (default /etc/sluice/kafka-client.json: the runner principal's
 * credentials and TLS trust, {@link KafkaClientSecurity}; no file is PLAINTEXT).
 */
public final class Main {
  private Main() {}

  /** The main consumer's fetch.max.wait.ms: the longest a close waits for its fetch in flight. */
  static final int MAIN_FETCH_MAX_WAIT_MS = 100;

  public static void main(String[] args) {
    Map<String, String> env = System.getenv();
    String mode = args.length == 0 ? "run" : args[0];
    Path planPath = Path.of(env.getOrDefault("SLUICE_PLAN_PATH", "/etc/sluice/plan.json"));
    Path dataDir = Path.of(env.getOrDefault("SLUICE_DATA_DIR", "/var/lib/sluice"));
    if (mode.equals("init-offsets")) {
      try {
        Plan plan = Plan.load(planPath, env.get("SLUICE_PLAN_SHA256"));
        System.out.println(initOffsets(plan, KafkaClientSecurity.load(clientPath(env))));
        System.out.flush();
        Runtime.getRuntime().halt(0);
      } catch (RunnerExit e) {
        exitWith(e);
      }
      return;
    }
    if (mode.equals("cds-training")) {
      // image build only (runner/Dockerfile): a normal exit, so the JVM writes the CDS archive
      try {
        CdsTraining.run();
      } catch (Exception e) {
        System.err.println("sluice-runner: CDS training failed: " + e);
        System.exit(1);
      }
      System.exit(0);
    }
    if (!mode.equals("run")) {
      exitWith(new RunnerExit("USAGE", "unknown mode '" + mode + "' (run | init-offsets)"));
    }
    StatusFile status = new StatusFile(dataDir.resolve("status.json"), env.get("SLUICE_GENERATION"));
    try {
      Plan plan = Plan.load(planPath, env.get("SLUICE_PLAN_SHA256"));
      status.setPlan(plan.sha256(), plan.applicationId(), plan.model());
      status.write("STARTING", null, null, null);
      KafkaClientSecurity security = KafkaClientSecurity.load(clientPath(env));
      TermHandler term = TermHandler.register(status);
      long gateStart = System.nanoTime();
      try (Admin admin = IdentityGate.open(adminProps(plan, security))) {
        status.setStartOffsets(IdentityGate.check(admin, plan));
      }
      // the first log line: logging starts after the status file says STARTING
      LoggerFactory.getLogger(Main.class).info("identity gate passed in {} ms ({})",
          (System.nanoTime() - gateStart) / 1_000_000, security.describe());
      long closeMs = Long.parseLong(env.getOrDefault("SLUICE_CLOSE_TIMEOUT_MS", "20000"));
      String leaveMode = env.getOrDefault("SLUICE_LEAVE_MODE", "internal");
      String clientId = ClientId.of(env.get("SLUICE_GENERATION"));
      new Main.Run(plan, security, status, dataDir.resolve("streams"), Duration.ofMillis(closeMs), leaveMode, clientId).run(term);
    } catch (RunnerExit e) {
      status.fail(e);
      exitWith(e);
    } catch (RuntimeException e) {
      RunnerExit x = new RunnerExit("RUNNER_FAILED", e.toString());
      status.fail(x);
      exitWith(x);
    }
  }

  /** Prints the one-line JSON reason as the last stdout line and halts with its code. */
  static void exitWith(RunnerExit e) {
    System.out.println(e.toJsonLine());
    System.out.flush();
    System.err.flush();
    Runtime.getRuntime().halt(e.exitCode);
  }

  /** Where sluice copies the Kafka client file ({@link KafkaClientSecurity}). */
  static Path clientPath(Map<String, String> env) {
    String path = env.get("SLUICE_KAFKA_CLIENT_PATH");
    return path == null || path.isEmpty() ? KafkaClientSecurity.DEFAULT_PATH : Path.of(path);
  }

  /** The Admin configuration under PLAINTEXT (the image build's training run). */
  static Properties adminProps(Plan plan) {
    return adminProps(plan, KafkaClientSecurity.PLAINTEXT);
  }

  /** The identity gate's (and the close's) Admin configuration, as the runner's principal. */
  static Properties adminProps(Plan plan, KafkaClientSecurity security) {
    Properties p = new Properties();
    security.applyTo(p);
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, plan.bootstrapServers());
    p.put(AdminClientConfig.CLIENT_ID_CONFIG, plan.applicationId() + "-gate");
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30000);
    p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10000);
    return p;
  }

  /** The Streams configuration for a plan without a generation (Kafka's default client ID). */
  public static Properties streamsProps(Plan plan, Path stateDir, String leaveMode) {
    return streamsProps(plan, stateDir, leaveMode, null);
  }

  /**
   * The Streams configuration for a plan (exported for tests and docs/runner.md); {@code clientId}
   * ({@link ClientId#of}) names the group member after the runner's generation, null keeps Kafka's
   * default.
   */
  public static Properties streamsProps(Plan plan, Path stateDir, String leaveMode, String clientId) {
    return streamsProps(plan, stateDir, leaveMode, clientId, KafkaClientSecurity.PLAINTEXT);
  }

  /**
   * The Streams configuration as the runner's principal: the security settings reach every client
   * Streams makes (its consumers, the output and dead-letter producer, its admin client).
   */
  public static Properties streamsProps(
      Plan plan, Path stateDir, String leaveMode, String clientId, KafkaClientSecurity security) {
    Properties p = new Properties();
    security.applyTo(p);
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, plan.applicationId());
    if (clientId != null) p.put(StreamsConfig.CLIENT_ID_CONFIG, clientId);
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, plan.bootstrapServers());
    p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
    p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.ByteArraySerde.class);
    p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.ByteArraySerde.class);
    // never a silent reset: a missing committed offset is exit 14
    p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "none");
    // a close waits for the main consumer's fetch in flight, which an idle input holds in the
    // broker for fetch.max.wait.ms (500 ms by default): a shorter wait shortens every TERM → exit
    // (docs/runner.md, "Close"); with records to fetch the broker answers at once either way
    p.put(StreamsConfig.mainConsumerPrefix(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG), MAIN_FETCH_MAX_WAIT_MS);
    switch (leaveMode) {
      case "internal":
        // Streams 4.1 forces internal.leave.group.on.close=false on its consumers; a client value
        // wins over that default, so the member sends LeaveGroup on close and the group is Empty
        // at once instead of after session.timeout.ms (docs/runner.md has the measurements).
        p.put(StreamsConfig.mainConsumerPrefix("internal.leave.group.on.close"), true);
        break;
      case "static":
        p.put(StreamsConfig.mainConsumerPrefix(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG), plan.applicationId() + "-0");
        break;
      case "none":
        break;
      default:
        throw new IllegalArgumentException("SLUICE_LEAVE_MODE must be internal, static or none");
    }
    return p;
  }

  /** Sets missing committed offsets to the artifact's initial_offsets; returns a JSON line. */
  static String initOffsets(Plan plan, KafkaClientSecurity security) throws RunnerExit {
    try (Admin admin = IdentityGate.open(adminProps(plan, security))) {
      List<TopicPartition> partitions = IdentityGate.checkIdentity(admin, plan);
      Map<TopicPartition, OffsetAndMetadata> committed = IdentityGate.get(
          admin.listConsumerGroupOffsets(plan.applicationId()).partitionsToOffsetAndMetadata(), "listConsumerGroupOffsets");
      Map<TopicPartition, OffsetSpec> want = new HashMap<>();
      for (TopicPartition tp : partitions) {
        if (committed.get(tp) == null) {
          want.put(tp, plan.initialOffsets().equals("earliest") ? OffsetSpec.earliest() : OffsetSpec.latest());
        }
      }
      Map<TopicPartition, OffsetAndMetadata> set = new HashMap<>();
      if (!want.isEmpty()) {
        Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> offsets =
            IdentityGate.get(admin.listOffsets(want).all(), "listOffsets");
        offsets.forEach((tp, info) -> set.put(tp, new OffsetAndMetadata(info.offset())));
        IdentityGate.get(admin.alterConsumerGroupOffsets(plan.applicationId(), set).all(), "alterConsumerGroupOffsets");
      }
      List<Object> rows = new java.util.ArrayList<>();
      for (TopicPartition tp : partitions) {
        long off = set.containsKey(tp) ? set.get(tp).offset() : committed.get(tp).offset();
        Map<String, Object> row = new java.util.LinkedHashMap<>();
        row.put("partition", new Json.Num(Integer.toString(tp.partition())));
        row.put("offset", new Json.Num(Long.toString(off)));
        row.put("initialized", set.containsKey(tp));
        rows.add(row);
      }
      Map<String, Object> result = new java.util.LinkedHashMap<>();
      result.put("group", plan.applicationId());
      result.put("partitions", rows);
      try {
        return Json.canonical(result);
      } catch (Json.NotCanonical e) {
        throw new IllegalStateException(e);
      }
    }
  }

  /** One run of the topology, from start to exit. */
  static final class Run {
    private final Plan plan;
    private final KafkaClientSecurity security;
    private final StatusFile status;
    private final Path stateDir;
    private final Duration closeTimeout;
    private final String leaveMode;
    private final String clientId;
    private final AtomicReference<RunnerExit> fatal = new AtomicReference<>();
    private final AtomicBoolean closing = new AtomicBoolean();
    private final CountDownLatch stopped = new CountDownLatch(1);

    Run(Plan plan, KafkaClientSecurity security, StatusFile status, Path stateDir, Duration closeTimeout,
        String leaveMode, String clientId) {
      this.plan = plan;
      this.security = security;
      this.status = status;
      this.stateDir = stateDir;
      this.closeTimeout = closeTimeout;
      this.leaveMode = leaveMode;
      this.clientId = clientId;
    }

    void run(TermHandler term) throws RunnerExit {
      KafkaStreams streams = new KafkaStreams(SluiceTopology.build(plan), streamsProps(plan, stateDir, leaveMode, clientId, security));
      streams.setUncaughtExceptionHandler(e -> {
        fatal.compareAndSet(null, classify(e));
        return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
      });
      streams.setStateListener((next, previous) -> {
        if (next == KafkaStreams.State.RUNNING && !closing.get()) status.write("RUNNING", null, null, null);
        if (next == KafkaStreams.State.ERROR || next == KafkaStreams.State.NOT_RUNNING) stopped.countDown();
        if (next == KafkaStreams.State.PENDING_ERROR || next == KafkaStreams.State.PENDING_SHUTDOWN) {
          if (!closing.get() && fatal.get() != null) stopped.countDown();
        }
      });
      if (!term.install(() -> onSigterm(streams))) {
        // TERM arrived first: its clean close (nothing processed) is recorded; never start
        parkForever();
      }
      streams.start();
      try {
        stopped.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      if (closing.get()) {
        // SIGTERM: the shutdown hook owns the close and the exit (143)
        parkForever();
      }
      // a fatal error (or the stream thread finished on its own): close here, never in a callback
      closing.set(true);
      boolean closed = streams.close(closeTimeout);
      RunnerExit e = fatal.get();
      if (e == null) {
        if (streams.state() == KafkaStreams.State.ERROR) {
          e = new RunnerExit("STREAMS_ERROR", "Kafka Streams entered ERROR");
        } else {
          status.write("CLOSED", 0, "STREAMS_FINISHED", "the stream thread finished without a signal");
          System.out.flush();
          Runtime.getRuntime().halt(0);
        }
      }
      if (!closed) {
        System.err.println("sluice-runner: close did not finish within " + closeTimeout);
      }
      throw e;
    }

    private void onSigterm(KafkaStreams streams) {
      if (!closing.compareAndSet(false, true)) return; // a fatal exit is already in progress
      status.write("CLOSING", null, "SIGTERM", null);
      boolean closed = leaveMode.equals("static")
          ? streams.close(new KafkaStreams.CloseOptions().leaveGroup(true).timeout(closeTimeout))
          : streams.close(closeTimeout);
      if (!closed || streams.state() != KafkaStreams.State.NOT_RUNNING) {
        RunnerExit e = new RunnerExit("CLOSE_TIMEOUT",
            "KafkaStreams.close did not finish cleanly within " + closeTimeout.toMillis() + " ms (state " + streams.state() + ")");
        status.fail(e);
        exitWith(e);
      }
      status.closed(closeOffsets(plan, security));
      System.out.flush();
      stopped.countDown();
      // returning lets the JVM finish the signal exit: status 143
    }

    /**
     * The group's committed offsets after the clean close (its EOS commit included: stable
     * offsets only), the close vector sluice compares with the group later; null when they
     * cannot be read within 5 s (the close stays clean, sluice then has nothing to compare).
     */
    static Map<Integer, Long> closeOffsets(Plan plan, KafkaClientSecurity security) {
      Properties p = adminProps(plan, security);
      p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 5000);
      p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5000);
      long t0 = System.nanoTime();
      try (Admin admin = Admin.create(p)) {
        Map<Integer, Long> out = IdentityGate.inputOffsets(plan, IdentityGate.committed(admin, plan));
        // what the read costs every clean close (bench/close_empty.ts reads this line)
        System.err.println("sluice-runner: close offsets read in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
        return out;
      } catch (RunnerExit | RuntimeException e) {
        System.err.println("sluice-runner: cannot read the committed offsets after the close: " + e);
        return null;
      }
    }

    static RunnerExit classify(Throwable e) {
      for (Throwable t = e; t != null; t = t.getCause()) {
        if (t instanceof DecodeException d) {
          RunnerExit x = new RunnerExit(d.code, d.detail());
          if (d.where != null) x.with("record", d.where.toMap());
          return x.with("field", d.field).with("rule", d.rule);
        }
        if (t instanceof NoOffsetForPartitionException n) {
          return new RunnerExit("OFFSETS_MISSING", String.valueOf(n.getMessage()));
        }
      }
      RunnerExit auth = IdentityGate.authFailure(e);
      if (auth != null) return auth;
      return new RunnerExit("STREAMS_FATAL", e.toString() + (e.getCause() == null ? "" : " caused by " + e.getCause()));
    }

    private static void parkForever() {
      while (true) {
        try {
          Thread.sleep(Long.MAX_VALUE);
        } catch (InterruptedException ignored) {
          // keep waiting for the hook to finish the exit
        }
      }
    }
  }
}
