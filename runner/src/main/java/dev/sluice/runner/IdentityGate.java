package dev.sluice.runner;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsOptions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * The container-side identity gate: before any consumer or producer exists, one Admin client
 * checks that the cluster, both topics and the dead-letter topic (on_invalid: dead_letter) are the
 * ones the plan was reviewed against: each exists and has the plan's topic ID (exit 12),
 * and that the group has a committed offset for every input partition (exit 14; the runner runs
 * with {@code auto.offset.reset=none} and never resets on its own).
 */
public final class IdentityGate {
  private IdentityGate() {}

  static final long TIMEOUT_SECONDS = 30;

  /**
   * The start-up Admin client. Creating it resolves the bootstrap address at once: while the
   * broker's container is down its name does not resolve on the Docker network and the client
   * refuses to start ("No resolvable bootstrap urls"). That is Kafka unreachable at start, a
   * cause fixed outside sluice, never an error of the runner itself.
   */
  static Admin open(Properties props) throws RunnerExit {
    try {
      return Admin.create(props);
    } catch (KafkaException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      RunnerExit auth = authFailure(e);
      if (auth != null) throw auth;
      throw new RunnerExit("KAFKA_UNREACHABLE", "the Admin client could not be created for "
          + props.get("bootstrap.servers") + ": " + cause.getMessage());
    }
  }

  /**
   * Runs every check; returns the group's committed offset per input partition on success (the
   * start vector of the status file).
   */
  public static Map<Integer, Long> check(Admin admin, Plan plan) throws RunnerExit {
    List<TopicPartition> partitions = checkIdentity(admin, plan);
    return checkOffsets(admin, plan, partitions);
  }

  /** Cluster ID and the topic IDs (input, output, dead-letter); returns the input partitions. */
  public static List<TopicPartition> checkIdentity(Admin admin, Plan plan) throws RunnerExit {
    String clusterId = get(admin.describeCluster().clusterId(), "describeCluster");
    if (!plan.clusterId().equals(clusterId)) {
      throw new RunnerExit("IDENTITY_CLUSTER_MISMATCH",
          "cluster ID is " + clusterId + ", the plan expects " + plan.clusterId());
    }
    TopicDescription in = describe(admin, plan.inputTopic());
    TopicDescription out = describe(admin, plan.outputTopic());
    checkTopic(in, plan.inputTopicId(), "input");
    checkTopic(out, plan.outputTopicId(), "output");
    // the dead-letter topic must exist (the producer would otherwise create it on the broker's
    // defaults) and be the one sluice created and bound (not deleted and recreated since)
    if (plan.deadLetterTopic() != null) {
      checkTopic(describe(admin, plan.deadLetterTopic()), plan.deadLetterTopicId(), "dead-letter");
    }

    List<TopicPartition> partitions = new ArrayList<>();
    in.partitions().forEach(p -> partitions.add(new TopicPartition(plan.inputTopic(), p.partition())));
    return partitions;
  }

  /**
   * Every input partition has a committed offset in the group (exit 14 otherwise); returns them.
   * Stable offsets only: an offset commit inside a transaction that is still open is waited for.
   */
  public static Map<Integer, Long> checkOffsets(Admin admin, Plan plan, List<TopicPartition> partitions) throws RunnerExit {
    Map<TopicPartition, OffsetAndMetadata> committed = committed(admin, plan);
    List<String> missing = new ArrayList<>();
    for (TopicPartition tp : partitions) {
      if (committed.get(tp) == null) missing.add(tp.toString());
    }
    if (!missing.isEmpty()) {
      throw new RunnerExit("OFFSETS_MISSING",
          "group " + plan.applicationId() + " has no committed offset for " + String.join(", ", missing)
              + "; sluice initializes them before the first start (init-offsets)");
    }
    return inputOffsets(plan, committed);
  }

  /** The group's stable committed offsets (listConsumerGroupOffsets with requireStable). */
  static Map<TopicPartition, OffsetAndMetadata> committed(Admin admin, Plan plan) throws RunnerExit {
    return get(admin.listConsumerGroupOffsets(plan.applicationId(), new ListConsumerGroupOffsetsOptions().requireStable(true))
        .partitionsToOffsetAndMetadata(), "listConsumerGroupOffsets");
  }

  /** The committed offsets of the plan's input topic, partition → offset. */
  static Map<Integer, Long> inputOffsets(Plan plan, Map<TopicPartition, OffsetAndMetadata> committed) {
    Map<Integer, Long> out = new TreeMap<>();
    committed.forEach((tp, o) -> {
      if (o != null && tp.topic().equals(plan.inputTopic())) out.put(tp.partition(), o.offset());
    });
    return out;
  }

  private static void checkTopic(TopicDescription d, String expectedId, String role) throws RunnerExit {
    String actual = d.topicId().toString(); // base64url, as Kafka prints it
    if (!actual.equals(expectedId)) {
      throw new RunnerExit("IDENTITY_TOPIC_MISMATCH",
          role + " topic " + d.name() + " has ID " + actual + ", the plan expects " + expectedId);
    }
  }

  private static TopicDescription describe(Admin admin, String topic) throws RunnerExit {
    try {
      return admin.describeTopics(List.of(topic)).allTopicNames().get(TIMEOUT_SECONDS, TimeUnit.SECONDS).get(topic);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof UnknownTopicOrPartitionException) {
        throw new RunnerExit("IDENTITY_TOPIC_MISSING", "topic " + topic + " does not exist").with("topic", topic);
      }
      throw failed("describeTopics " + topic, e.getCause());
    } catch (TimeoutException e) {
      throw new RunnerExit("KAFKA_UNREACHABLE", "describeTopics " + topic + " timed out after " + TIMEOUT_SECONDS + " s");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new RunnerExit("INTERRUPTED", "interrupted");
    }
  }

  /**
   * A failed Admin call: the broker refused the principal's login (its password, its certificate,
   * the TLS handshake) or an operation the principal is not allowed; any other failure is
   * KAFKA_ADMIN_FAILED. Kafka's messages name the mechanism, the resource and the operation,
   * never a credential.
   */
  static RunnerExit failed(String what, Throwable cause) {
    RunnerExit auth = authFailure(cause);
    return auth != null ? auth : new RunnerExit("KAFKA_ADMIN_FAILED", what + ": " + cause);
  }

  /** KAFKA_AUTHENTICATION_FAILED or KAFKA_AUTHORIZATION_FAILED for a cause chain holding one; else null. */
  static RunnerExit authFailure(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof AuthenticationException) {
        return new RunnerExit("KAFKA_AUTHENTICATION_FAILED", t.getClass().getSimpleName() + ": " + t.getMessage());
      }
      if (t instanceof AuthorizationException) {
        return new RunnerExit("KAFKA_AUTHORIZATION_FAILED", t.getClass().getSimpleName() + ": " + t.getMessage());
      }
    }
    return null;
  }

  static <T> T get(org.apache.kafka.common.KafkaFuture<T> f, String what) throws RunnerExit {
    try {
      return f.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      throw failed(what, e.getCause());
    } catch (TimeoutException e) {
      throw new RunnerExit("KAFKA_UNREACHABLE", what + " timed out after " + TIMEOUT_SECONDS + " s");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new RunnerExit("INTERRUPTED", what + " interrupted");
    }
  }
}
