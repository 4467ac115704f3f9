// test-needs: postgres
// One reviewed operation reads the manifest, the environment and the store once (one session
// per command), on both state backends' real code over the fakes:
// - C114: the environment policy and the state authority are frozen throughout the operation —
//   `sluice.yaml` edited right after the intent to declare environments and name another state
//   store (and, for PostgreSQL, the DSN variable repointed at a closed port) does not reach the
//   running replacement: its next transition re-reads the project (C87) and stops as a blocker
//   in the store it opened; with the files put back, resume commits there, in no environment,
//   while a fresh reader of the edited files would be refused (no --env) or sent elsewhere;
// - C117: runner-status and resume observe with the project instance their checks validated —
//   the manifest's Kafka addresses, network and image edited right after the deployment lock is
//   taken (the last of their checks) are never seen by a provider call (resume stops at its
//   first transition, C87); the unedited values are (the search is not empty), and a fresh
//   command over the edited files is refused before any provider call.
import assert from "node:assert/strict";
import { SluiceError } from "../../lib/errors.ts";
import { onCrossing } from "../../lib/fault/site.ts";
import { loadProject } from "../../lib/project/load.ts";
import type { DockerPort } from "../../lib/providers/docker/port.ts";
import type { KafkaPort } from "../../lib/providers/kafka/port.ts";
import { progressLabel } from "../../lib/runtime/progress.ts";
import { executeReviewed } from "../../lib/runtime/replacement/execute.ts";
import { resumeReviewed } from "../../lib/runtime/replacement/resume.ts";
import { runnerStatus } from "../../lib/runtime/replacement/runner_status.ts";
import { projectStoreConfig } from "../../lib/runtime/state_store.ts";
import { closedPort } from "../net.ts";
import { historyEvents } from "../sweep/reads.ts";
import { BACKENDS, replacementCase } from "./replacement_case.ts";

/** Edit a file in place, synchronously (from a progress or crossing listener). */
function rewrite(path: string, edit: (text: string) => string): void {
  const text = Deno.readTextFileSync(path);
  const edited = edit(text);
  assert.notEqual(edited, text, "the edit changed nothing");
  Deno.writeTextFileSync(path, edited);
}

/** Replace one line of YAML, which must be there. */
function setting(pattern: RegExp, line: string): (text: string) => string {
  return (text) => {
    assert.match(text, pattern);
    return text.replace(pattern, line);
  };
}

for (const backend of BACKENDS) {
  Deno.test(`[${backend}] environments and state settings edited during a replacement are not read: it commits into the store it opened`, async () => {
    await using rc = await replacementCase(backend);
    const manifest = `${rc.cw.project.dir}/sluice.yaml`;
    const elsewhere = `${rc.cw.root}/other-state`;
    const dsnVar = backend === "postgres"
      ? /^ {2}dsn_env: (\S+)$/m.exec(Deno.readTextFileSync(manifest))![1]
      : null;
    const otherVar = `SLUICE_FROZEN_DSN_${crypto.randomUUID().replaceAll("-", "")}`;
    const unreachable = `postgres://sluice@127.0.0.1:${await closedPort()}/nowhere`;
    let edited = false;
    const edit = () => {
      rewrite(manifest, (t) => {
        const state = backend === "local"
          ? setting(/^ {2}dir: \.sluice\/state$/m, `  dir: ${elsewhere}`)(t)
          : setting(/^ {2}dsn_env: \S+$/m, `  dsn_env: ${otherVar}`)(t);
        return `${state}\nenvironments:\n  prod:\n    initial_offsets: earliest\n  staging:\n    initial_offsets: latest\n`;
      });
      if (dsnVar) {
        Deno.env.set(dsnVar, unreachable);
        Deno.env.set(otherVar, unreachable);
      }
      edited = true;
    };
    const original = Deno.readTextFileSync(manifest);
    const originalDsn = dsnVar ? Deno.env.get(dsnVar) : undefined;
    try {
      const r = await executeReviewed(rc.options({
        onProgress: (e) => {
          // right after the intent: every row, the finalization and the receipt come after it
          if (!edited && progressLabel(e) === "intent") edit();
        },
      }));
      assert.ok(edited, "the manifest was never edited");
      // the running operation never takes up the edited settings: its next transition re-reads
      // the project (C87), finds it changed and stops as a blocker, in the store it opened
      assert.equal(r.committed, false, JSON.stringify(r));
      assert.equal(r.outcome, "blocked", JSON.stringify(r));
      assert.ok(r.blockers.length > 0, JSON.stringify(r));
      const pending = await rc.state();
      assert.equal(pending.control?.operation_id, r.operation_id);
      if (backend === "local") {
        assert.equal(await Deno.stat(elsewhere).then(() => true, () => false), false);
      }
      // the files put back, the same operation finishes where it began
      Deno.writeTextFileSync(manifest, original);
      if (dsnVar && originalDsn !== undefined) Deno.env.set(dsnVar, originalDsn);
      const done = await resumeReviewed(rc.operation(r.operation_id));
      assert.equal(done.committed, true, JSON.stringify(done));
      assert.equal(done.last_boundary, "finalized");
      // no environment was taken up: its commands name none, its receipt records none
      assert.doesNotMatch(done.commands.resume, /--env|--confirm-env/);
      assert.equal(done.receipt?.intent.environment, null, JSON.stringify(done.receipt));
      // the store it opened holds the result (read directly, at the original location)
      const state = await rc.state();
      assert.equal(state.control, null);
      assert.equal(state.ownership?.serial, 2);
      const receipts = historyEvents(state).filter((e) =>
        e.kind === "runner_completed" && e.operation_id === r.operation_id
      );
      assert.equal(receipts.length, 1);
      // nothing was opened where the edited manifest points
      if (backend === "local") {
        assert.equal(await Deno.stat(elsewhere).then(() => true, () => false), false);
      }

      edit();
      // the edit is real for a fresh reader: the environment policy now demands --env ...
      await assert.rejects(
        runnerStatus(rc.operation(r.operation_id)),
        (e) => e instanceof SluiceError && e.code === "MANIFEST_ENVIRONMENT_REQUIRED",
      );
      // ... and the state authority is the other store
      const fresh = projectStoreConfig(
        await loadProject(rc.cw.project.dir, { environment: "prod" }),
      );
      if (fresh.backend === "local") assert.equal(fresh.dir, elsewhere);
      else assert.equal(fresh.url, unreachable);
    } finally {
      Deno.env.delete(otherVar);
      if (dsnVar && originalDsn !== undefined) Deno.env.set(dsnVar, originalDsn);
    }
  });

  Deno.test(`[${backend}] runner-status and resume never reach a provider with Kafka, network or image settings edited after their checks`, async () => {
    await using rc = await replacementCase(backend);
    const env = rc.cw.world.env;
    const manifest = `${rc.cw.project.dir}/sluice.yaml`;
    const original = Deno.readTextFileSync(manifest);
    const changed = {
      bootstrapHost: "frozen-kafka.invalid:19092",
      bootstrapInternal: "frozen-kafka.invalid:9092",
      network: "sluice-frozen-net",
      image: `sha256:${"e".repeat(64)}`,
    };
    const editSettings = (t: string) =>
      [
        setting(/^ {2}bootstrap_host: .*$/m, `  bootstrap_host: ${changed.bootstrapHost}`),
        setting(
          /^ {2}bootstrap_internal: .*$/m,
          `  bootstrap_internal: ${changed.bootstrapInternal}`,
        ),
        setting(/^network: .*$/m, `network: ${changed.network}`),
        setting(/^image: .*$/m, `image: ${changed.image}`),
      ].reduce((text, f) => f(text), t);

    // the operation is left pending at old_closed: the old container's removal answer is lost
    rc.cw.world.control.failCall("removeContainer", { effect: "lose_response" });
    const first = await executeReviewed(rc.options());
    assert.equal(first.committed, null, JSON.stringify(first));
    assert.equal(first.last_boundary, "old_closed");

    const calls: string[] = [];
    const docker = recording("docker", rc.cw.deps.docker!, calls);
    const kafka = recording("kafka", rc.cw.deps.kafka!, calls);
    const operation = () => rc.operation(first.operation_id, { docker, kafka });
    /** Run `fn` with the manifest edited as soon as it holds the deployment lock. */
    const editedAfterChecks = async <T>(fn: () => Promise<T>): Promise<T> => {
      let edited = false;
      const stop = onCrossing((c) => {
        if (edited || c.side !== "after" || c.site.name !== `lock.${backend}.acquire`) return;
        rewrite(manifest, editSettings);
        edited = true;
      });
      try {
        return await fn();
      } finally {
        stop();
        assert.ok(edited, "the manifest was never edited");
      }
    };
    const reached = (value: string) => calls.filter((c) => c.includes(value));
    const unreachedChanged = (what: string) => {
      for (const [name, value] of Object.entries(changed)) {
        assert.deepEqual(reached(value), [], `${what}: a provider saw the edited ${name}`);
      }
    };

    // runner-status: the same report as over the unedited files, from the same reads
    const baseline = await runnerStatus(operation());
    const baselineCalls = calls.splice(0);
    const status = await editedAfterChecks(() => runnerStatus(operation()));
    // the same report but for the time of the observation
    const untimed = (s: typeof status) => ({
      ...s,
      observation: s.observation && { ...s.observation, observedAt: null },
    });
    assert.ok(status.observation?.observedAt, "runner-status observed nothing");
    assert.deepEqual(untimed(status), untimed(baseline));
    assert.deepEqual(calls, baselineCalls);
    unreachedChanged("runner-status");
    assert.ok(reached(env.network).length > 0, "runner-status never named the network");
    assert.ok(reached(env.runnerImage).length > 0, "runner-status never named the image");

    // resume: the settings edited after its checks are never used — its first transition
    // re-reads the project (C87) and stops as a blocker, before any provider action
    Deno.writeTextFileSync(manifest, original);
    calls.length = 0;
    const stopped = await editedAfterChecks(() => resumeReviewed(operation()));
    assert.equal(stopped.committed, false, JSON.stringify(stopped));
    assert.deepEqual(stopped.blockers.map((b) => b.code), ["PLAN_STALE_SOURCE"]);
    unreachedChanged("resume");
    assert.deepEqual(calls.filter((c) => c.startsWith("docker.createContainer ")), []);
    // put back, the candidate is created on the checked network from the checked image
    Deno.writeTextFileSync(manifest, original);
    calls.length = 0;
    const done = await resumeReviewed(operation());
    assert.equal(done.committed, true, JSON.stringify(done));
    unreachedChanged("resume");
    const creates = calls.filter((c) => c.startsWith("docker.createContainer "));
    assert.equal(creates.length, 1, JSON.stringify(calls));
    assert.ok(creates[0].includes(env.network), creates[0]);
    assert.ok(creates[0].includes(env.runnerImage), creates[0]);
    // the runner's Kafka address is in the plan file the candidate mounts
    const spec = JSON.parse(creates[0].slice("docker.createContainer ".length))[0];
    const mounted = Deno.readTextFileSync(spec.planHostPath);
    assert.ok(mounted.includes(`"${env.bootstrapInternal}"`), mounted);
    assert.ok(!mounted.includes(changed.bootstrapInternal), "the candidate got the edited address");

    // a fresh command reads the edited files: refused before any provider call
    rewrite(manifest, editSettings);
    calls.length = 0;
    await assert.rejects(
      runnerStatus(operation()),
      (e) => e instanceof SluiceError && e.code === "PLAN_STALE_SOURCE",
    );
    assert.deepEqual(calls, []);
  });
}

/** A port whose every call is recorded as `port.method <arguments as JSON>` (bytes as text). */
function recording<P extends DockerPort | KafkaPort>(name: string, port: P, calls: string[]): P {
  const json = (args: unknown[]) =>
    JSON.stringify(args, (_k, v) => {
      if (typeof v === "bigint") return v.toString();
      if (v instanceof Uint8Array) return new TextDecoder().decode(v);
      if (v instanceof Map) return Object.fromEntries(v);
      return v;
    });
  return new Proxy(port, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== "function") return v;
      return (...args: unknown[]) => {
        if (prop !== "close") calls.push(`${name}.${String(prop)} ${json(args)}`);
        return v.apply(target, args);
      };
    },
  });
}
