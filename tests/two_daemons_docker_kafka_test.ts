// test-needs: docker
// Needs: root, the machine's dockerd and a private daemon of its own (harness/two_daemons.ts,
// harness/dockerd.ts), the locally built broker and runner images (copied into the private
// daemon). Its broker is its own, on the private daemon; the shared environment is not used.
// What a job spread over two daemons relies on: a container of either daemon, attached to the
// network of the one shared name, does real Kafka metadata round trips against the one
// bootstrap address, and both reach the same broker; the create journey makes a set of two
// instances (issue 31), one on each daemon, ready as two real runners of one group holding every
// partition, which `status` reads on each endpoint; a plan blocks by name on the daemon that
// stops answering, and plans the owned set to nothing once it answers; an instance killed on the
// private daemon is brought back there by `restart`; a record no runner can decode stops both,
// and `skip-record` with `restart` move the set past it; a destroy takes the set down.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { dockerCli } from "../harness/docker.ts";
import { sh } from "../harness/dockerd.ts";
import { RUN_LABEL } from "../harness/env.ts";
import { KAFKA_IMAGE } from "../harness/images.ts";
import { describeCluster, produce, withAdmin } from "../harness/kafka.ts";
import { startTwoDaemons, stopTwoDaemons, type TwoDaemons } from "../harness/two_daemons.ts";
import { openProject, writePlanFile } from "../mod.ts";
import { tempStarter } from "../lib/project/_test_project.ts";
import { loadProject } from "../lib/project/load.ts";
import { endpointDocker } from "../lib/providers/docker/endpoint.ts";
import { LABEL, RUNNER_PATHS } from "../lib/runtime/labels.ts";
import { SETS_GATE } from "../lib/plan/instances.ts";
import { runnerImageId, starterProject } from "../harness/project.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

/** Bound on one tool run inside its container (a JVM start and an admin call, under load). */
const TOOL_SECONDS = 240;
/** Attempts of one tool run: a round trip that timed out under load is tried once more. */
const ATTEMPTS = 2;

/**
 * Run a Kafka tool class in a throwaway container of the daemon `host`, attached to the shared
 * network by its name; `args` name the bootstrap address ({@link bootstrap}). The container's
 * first line of output is its own address on that network. Idempotent tools only (a retry must
 * be harmless).
 */
async function kafkaTool(
  two: TwoDaemons,
  host: string,
  tool: string,
  args: string[],
): Promise<{ address: string; out: string }> {
  const script = `hostname -i; exec timeout ${TOOL_SECONDS} /opt/kafka/bin/kafka-run-class.sh "$@"`;
  const tries: string[] = [];
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const r = await sh(dockerCli(), [
      "-H",
      host,
      "run",
      "--rm",
      ...Object.entries(two.labels).flatMap(([k, v]) => ["--label", `${k}=${v}`]),
      "--network",
      two.network,
      "--entrypoint",
      "sh",
      KAFKA_IMAGE,
      "-c",
      script,
      "tool",
      tool,
      ...args,
    ]);
    if (r.code === 0) {
      const [address, ...rest] = r.out.split("\n");
      return { address: address.trim(), out: rest.join("\n") };
    }
    tries.push(`attempt ${attempt} (exit ${r.code}):\n${r.out.slice(-1500)}`);
  }
  throw new Error(`${tool} ${args.join(" ")} on ${host} failed:\n${tries.join("\n")}`);
}

/** The broker's one address for containers on either daemon. */
function bootstrap(two: TwoDaemons): string[] {
  return ["--bootstrap-server", two.bootstrapInternal];
}

const TOPICS = "org.apache.kafka.tools.TopicCommand";
const CLUSTER = "org.apache.kafka.tools.ClusterTool";

/** `Topic: <name>\tTopicId: <id>\tPartitionCount: <n>` of `TopicCommand --describe`. */
function describedTopic(out: string, topic: string): { id: string; partitions: number } | null {
  const m = new RegExp(`Topic: ${topic}\\s+TopicId: (\\S+)\\s+PartitionCount: (\\d+)`).exec(out);
  return m ? { id: m[1], partitions: Number(m[2]) } : null;
}

Deno.test(
  "two daemons, one broker: a container on either daemon's network of the shared name reaches it at the one bootstrap address",
  opts,
  async (t) => {
    // the runner image goes to the private daemon too: a set's instance 1 runs there
    const image = await runnerImageId();
    const two = await startTwoDaemons({ images: [image] });
    try {
      const { machine, private: priv } = two.hosts;
      const hex = randomBytes(3).toString("hex");
      const fromPrivate = `two-daemons-b-${hex}`;
      const fromMachine = `two-daemons-a-${hex}`;
      const seen: Record<string, string> = {};

      await t.step("one bootstrap address, one network name on both daemons", async () => {
        assert.notEqual(machine, priv);
        assert.equal(two.bootstrapInternal, two.bootstrapHost);
        for (const host of [machine, priv]) {
          const r = await sh(dockerCli(), [
            "-H",
            host,
            "network",
            "inspect",
            "--format",
            `{{.Name}} {{.Driver}} {{index .Labels "${RUN_LABEL}"}}`,
            two.network,
          ]);
          assert.equal(r.code, 0, r.out);
          assert.equal(r.out, `${two.network} bridge ${two.runId}`);
        }
      });

      await t.step("a topic created from the private daemon's network", async () => {
        const r = await kafkaTool(two, priv, TOPICS, [
          ...bootstrap(two),
          "--create",
          "--if-not-exists",
          "--topic",
          fromPrivate,
          "--partitions",
          "2",
        ]);
        seen.private = r.address;
        const listed = await kafkaTool(two, priv, TOPICS, [...bootstrap(two), "--list"]);
        assert.ok(listed.out.split("\n").includes(fromPrivate), listed.out);
      });

      await t.step(
        "is listed from the machine daemon's network, which creates one of its own",
        async () => {
          const listed = await kafkaTool(two, machine, TOPICS, [...bootstrap(two), "--list"]);
          seen.machine = listed.address;
          assert.ok(listed.out.split("\n").includes(fromPrivate), listed.out);
          await kafkaTool(two, machine, TOPICS, [
            ...bootstrap(two),
            "--create",
            "--if-not-exists",
            "--topic",
            fromMachine,
            "--partitions",
            "3",
          ]);
        },
      );

      await t.step("both daemons see the same cluster and the same topics", async () => {
        const described: Record<string, string> = {};
        for (const [side, host] of [["private", priv], ["machine", machine]] as const) {
          const cluster = await kafkaTool(two, host, CLUSTER, ["cluster-id", ...bootstrap(two)]);
          assert.match(cluster.out, new RegExp(`^Cluster ID: ${two.clusterId}$`, "m"), side);
          const d = await kafkaTool(two, host, TOPICS, [
            ...bootstrap(two),
            "--describe",
            "--topic",
            "two-daemons-.*",
          ]);
          const b = describedTopic(d.out, fromPrivate);
          const a = describedTopic(d.out, fromMachine);
          assert.equal(b?.partitions, 2, `${side}: ${d.out}`);
          assert.equal(a?.partitions, 3, `${side}: ${d.out}`);
          described[side] = `${b!.id} ${a!.id}`;
        }
        assert.equal(described.private, described.machine);
        // and the host, at the same address: the same cluster ID and topic IDs
        const host = await describeCluster(two.bootstrapHost, [fromPrivate, fromMachine]);
        assert.equal(host.clusterId, two.clusterId);
        assert.equal(
          `${host.topicIds[fromPrivate]} ${host.topicIds[fromMachine]}`,
          described.private,
        );
      });

      await t.step("the clients ran on different daemons' networks", () => {
        // the private daemon's network is 10.<block>.1.0/24 (harness/dockerd.ts); the machine's
        // comes from its own pool
        assert.match(seen.private, new RegExp(`^10\\.${two.daemon.block}\\.1\\.\\d+$`));
        assert.match(seen.machine, /^\d+\.\d+\.\d+\.\d+$/);
        assert.doesNotMatch(seen.machine, new RegExp(`^10\\.${two.daemon.block}\\.`));
        console.log(
          `bootstrap ${two.bootstrapInternal} on network ${two.network}: private-daemon client ` +
            `${seen.private}, machine-daemon client ${seen.machine}`,
        );
      });

      await t.step(
        "sluice status reads both endpoints' daemons, and names one that accepts and never answers",
        async () => {
          const dir = await tempStarter();
          const manifest = `${dir}/sluice.yaml`;
          await Deno.writeTextFile(
            manifest,
            (await Deno.readTextFile(manifest))
              .replace(/bootstrap_host: .*/, `bootstrap_host: "${two.bootstrapHost}"`)
              .replace(/bootstrap_internal: .*/, `bootstrap_internal: "${two.bootstrapInternal}"`)
              .replace(/^network: .*/m, `network: ${two.network}`) +
              `docker:\n  endpoints:\n    machine: { endpoint: "${machine}" }\n` +
              `    spare: { endpoint: "${priv}" }\n`,
          );
          const daemonId = async (host: string) =>
            (await sh(dockerCli(), ["-H", host, "info", "--format", "{{.ID}}"])).out;
          const ids = { machine: await daemonId(machine), spare: await daemonId(priv) };
          assert.notEqual(ids.machine, ids.spare);
          const pid = Number((await Deno.readTextFile(two.daemon.pidfile)).trim());
          try {
            await using project = await openProject({ dir });
            const up = await project.status();
            assert.deepEqual(
              up.endpoints?.map((e) => [e.name, e.endpoint, e.reachable, e.daemon_id, e.problem]),
              [
                ["machine", machine, true, ids.machine, null],
                ["spare", priv, true, ids.spare, null],
              ],
            );
            // a stopped process: its socket still accepts, nothing answers
            Deno.kill(pid, "SIGSTOP");
            const down = await project.status();
            assert.deepEqual(down.endpoints?.map((e) => [e.name, e.reachable]), [
              ["machine", true],
              ["spare", false],
            ]);
            assert.equal(down.endpoints![1].problem?.code, "ENV_DOCKER_UNREACHABLE");
            assert.match(
              down.endpoints![1].problem!.message,
              /docker\.endpoints\.spare\.endpoint.* did not answer daemonId: no answer within 10 s/,
            );
          } finally {
            Deno.kill(pid, "SIGCONT");
            await Deno.remove(dir, { recursive: true });
          }
          // and it answers again once it runs
          assert.equal(await daemonId(priv), ids.spare);
        },
      );

      await t.step(
        "a set of two instances over both daemons: status reads each on its endpoint, two real runners are one group holding every partition, and a plan names the daemon that stops answering",
        async () => {
          const p = await starterProject(two, { image });
          const endpoints = `docker:\n  endpoints:\n    machine: { endpoint: "${machine}" }\n` +
            `    spare: { endpoint: "${priv}" }\n`;
          await p.editManifest((text) =>
            text.replace(
              "    sql: models/eligible_orders.sql\n",
              "    sql: models/eligible_orders.sql\n    instances: 2\n",
            ) + endpoints
          );
          const pid = Number((await Deno.readTextFile(two.daemon.pidfile)).trim());
          const app = `sluice-${p.name}-eligible_orders`;
          // sets are open to this process only (no journey removes a set yet)
          Deno.env.set(SETS_GATE, "1");
          try {
            // the create journey makes the set: instance 0 on machine, instance 1 on spare
            {
              await using project = await openProject({ dir: p.dir, extraLabels: two.labels });
              const created = await project.apply();
              assert.equal(created.kind, "change");
            }
            const { manifest } = await loadProject(p.dir);
            const onSpare = await endpointDocker(manifest, "spare");
            const zero = (await (await endpointDocker(manifest, "machine")).inspectContainer(app))!;
            const one = (await onSpare.inspectContainer(`${app}.1`))!;
            assert.equal(one.labels[LABEL.instance], "1");
            assert.equal(one.labels[LABEL.generation], zero.labels[LABEL.generation]);
            assert.deepEqual(
              one.mounts.filter((m) => m.destination === RUNNER_PATHS.volume).map((m) => m.source),
              [`${app}-state-1`],
            );

            await using project = await openProject({ dir: p.dir });
            // the create returned once the set was ready: two members holding every partition
            const m = (await project.status()).models[0];
            assert.equal(m.set_problem, null, JSON.stringify(m));
            assert.equal(m.healthy, true);
            assert.deepEqual(
              m.instances!.map((i) => [i.instance, i.endpoint, i.state, i.container, i.runner]),
              [
                [0, "machine", "running", app, "RUNNING"],
                [1, "spare", "running", `${app}.1`, "RUNNING"],
              ],
            );
            assert.equal(m.members, 2);
            assert.deepEqual(m.unowned_partitions, []);
            // read by the harness's own admin client: two members, each holding part of the input
            const held = await withAdmin(two.bootstrapHost, async (admin) => {
              const g = (await admin.describeGroups({ groups: [app] })).get(app)!;
              return [...g.members.values()].map((x) =>
                [...(x.assignments?.values() ?? [])]
                  .filter((a) => a.topic === p.inputTopic)
                  .flatMap((a) => [...a.partitions])
                  .sort()
              );
            });
            assert.equal(held.length, 2);
            assert.ok(held.every((h) => h.length > 0), JSON.stringify(held));
            assert.deepEqual(held.flat().sort(), [0, 1, 2]);

            // spare stops answering: instance 1 is named with its endpoint's problem
            Deno.kill(pid, "SIGSTOP");
            const down = (await project.status()).models[0];
            assert.deepEqual(
              down.instances!.map((i) => [i.instance, i.reachable, i.problem?.code ?? null]),
              [[0, true, null], [1, false, "ENV_DOCKER_UNREACHABLE"]],
            );
            assert.match(down.set_problem!, /^instance 1 on spare: its daemon does not answer/);
            assert.equal(down.healthy, false);
            // and a plan of the owned set names the endpoint it needs and could not read (each
            // call bounded)
            const planned = await project.plan();
            assert.deepEqual(planned.plan.blockers.map((b) => b.code), [
              "BLOCKED_ENDPOINT_UNREACHABLE",
            ]);
            assert.deepEqual(planned.plan.blockers[0].evidence, {
              endpoint: "spare",
              instances: [1],
            });

            // spare answers again: the owned set, unchanged, plans to nothing
            Deno.kill(pid, "SIGCONT");
            const same = await project.plan();
            assert.deepEqual([same.plan.blockers, same.plan.actions], [[], []]);

            // instance 1 killed on spare (docker kill: 137): restart brings it back on spare once
            // its dead member has left the group, and the set is one group of two again
            await sh(dockerCli(), ["-H", priv, "kill", `${app}.1`]);
            const restarted = await project.restart({
              model: "eligible_orders",
              reason: "the spare host's runner was killed",
            });
            assert.deepEqual(restarted.instance, {
              index: 1,
              endpoint: "spare",
              still_stopped: [],
            });
            assert.deepEqual([restarted.stop.exit_code, restarted.started_now], [137, true]);
            assert.equal((await onSpare.inspectContainer(`${app}.1`))!.state.running, true);
            // the group settles after the member joins (a rebalance): read until it has, bounded
            let again = (await project.status()).models[0];
            for (let i = 0; i < 60 && again.set_problem !== null; i++) {
              await new Promise((r) => setTimeout(r, 1_000));
              again = (await project.status()).models[0];
            }
            assert.equal(again.set_problem, null, JSON.stringify(again));
            assert.equal(again.members, 2);
            assert.deepEqual(again.unowned_partitions, []);

            // a record no runner can decode: its partition reaches each instance in turn, and
            // each stops at it (exit 13); skip-record moves the set past it with both stopped and
            // restarts one, restart brings the other back past the same skip
            await produce(two.bootstrapHost, p.inputTopic, [{
              key: "bad",
              value: JSON.stringify({ order_id: "x", amount: "lots", paid: true, customer: null }),
            }]);
            const onMachine = await endpointDocker(manifest, "machine");
            const exits = async () =>
              [await onMachine.inspectContainer(app), await onSpare.inspectContainer(`${app}.1`)]
                .map((c) => c!.state.running ? null : c!.state.exitCode);
            let stoppedAt = await exits();
            for (let i = 0; i < 240 && stoppedAt.some((x) => x === null); i++) {
              await new Promise((r) => setTimeout(r, 1_000));
              stoppedAt = await exits();
            }
            assert.deepEqual(stoppedAt, [13, 13]);
            const poisoned = (await project.status()).models[0].instances!;
            const rec = poisoned[0].stop!.runner!.record!;
            assert.deepEqual(poisoned[1].stop!.runner!.record, rec, "both stopped at it");
            const skipped = await project.skipRecord({
              model: "eligible_orders",
              partition: rec.partition,
              offset: String(rec.offset),
              reason: "a test order with a text amount",
            });
            assert.equal(skipped.moved_now, true);
            assert.equal(skipped.committed, String(rec.offset + 1));
            assert.deepEqual(skipped.restart.instance!.still_stopped, [1]);
            const past = await project.restart({
              model: "eligible_orders",
              reason: "past the skipped record",
            });
            assert.deepEqual([past.instance!.index, past.after_skip], [1, skipped.event_id]);
            assert.deepEqual(await exits(), [null, null], "both run again");

            // a destroy takes the set down, each instance closed cleanly and removed on its own
            // daemon, both volumes kept where they are
            const destroy = await project.plan({ destroy: true });
            assert.deepEqual(destroy.plan.blockers, []);
            const file = `${p.dir}/destroy.plan.json`;
            await writePlanFile(file, destroy.plan);
            const takenDown = await project.apply({ plan: file });
            assert.ok(takenDown.kind === "change");
            const removed = takenDown.result.removals?.removed ?? [];
            assert.deepEqual(removed.map((r) => [r.instance, r.endpoint, r.container_name]), [
              [0, "machine", app],
              [1, "spare", `${app}.1`],
            ]);
            assert.ok(removed.every((r) => r.exit_code === 0 || r.exit_code === 143));
            assert.equal(await onMachine.inspectContainer(app), null);
            assert.equal(await onSpare.inspectContainer(`${app}.1`), null);
            assert.deepEqual([...(await onSpare.listVolumes([`${app}-state-1`])).keys()], [
              `${app}-state-1`,
            ]);
            assert.deepEqual([...(await onMachine.listVolumes([`${app}-state`])).keys()], [
              `${app}-state`,
            ]);
          } finally {
            Deno.env.delete(SETS_GATE);
            Deno.kill(pid, "SIGCONT");
            await Deno.remove(p.dir, { recursive: true });
          }
        },
      );
    } finally {
      await stopTwoDaemons(two);
    }
  },
);
