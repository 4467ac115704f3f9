// test-needs: env
// Needs: Docker, the broker image and the runner image. Starts its own broker with a SASL_SSL
// listener (SCRAM users, a CA made now, the StandardAuthorizer: harness/secure_kafka.ts) and runs
// the whole journey through the SDK on it — a user's script importing mod.ts by file:// URL from
// a scratch directory, each step its own OS process — the runner connecting as its own principal
// with exactly the ACLs its job needs: initProject → plan → apply (create) → exact output → a
// reviewed predicate change whose apply process dies by SIGKILL at a fault site chosen at random
// among the replacement table's sites and sides (lib/fault/site.ts: the process kills itself
// there; the seed is printed, SLUICE_TEST_SEED=<n> replays it) → resume through the SDK, breaking
// the dead process's lock (a kill after the final commit leaves nothing pending) → exact output,
// same application ID and volume instance, offsets only forward → a no-op plan.
import assert from "node:assert/strict";
import { join } from "node:path";
import { startEnv } from "../harness/env.ts";
import { INSTALL_PERMISSIONS } from "../harness/install.ts";
import { pointStarterAt, runnerImageId } from "../harness/project.ts";
import {
  grantRunnerAcls,
  scramSecurityYaml,
  scramVariables,
  securedManifest,
} from "../harness/secure_kafka.ts";
import { scratchDir } from "./scratch.ts";
import {
  CHANGED_PREDICATE,
  containersOf,
  outputAcrossChange,
  removeApplication,
  replacementKillPoint,
  starterApplicationId,
  volumeLabels,
} from "./deploy_fixture.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
/** A step is killed if it outlives this (a replacement takes a minute or two on a busy host). */
const STEP_LIMIT_MS = 10 * 60_000;

/**
 * A user's script: the SDK's documented calls, nothing from the checkout but `mod.ts` at `sdk`.
 * One JSON line on stdout per step.
 */
function userScript(sdk: string): string {
  return `import { initProject, openProject, writePlanFile } from "${sdk}";

const [step, dir, file, operationId, lockId] = Deno.args;
const say = (x: unknown) => console.log(JSON.stringify(x));
if (step === "init") {
  const { files } = await initProject(dir);
  say({ files: files.map((f) => f.path) });
} else {
  await using project = await openProject({ dir });
  if (step === "plan") {
    // plan; with a file, keep the reviewed plan there
    const { plan } = await project.plan();
    if (file) await writePlanFile(file, plan);
    say({ format: plan.format, actions: plan.actions, blockers: plan.blockers.map((b) => b.code) });
  } else if (step === "apply") {
    say({ outcome: await project.apply({ plan: file }) });
  } else if (step === "state") {
    const view = await project.state();
    say({ pending: view.pending_operation, lock: view.lock, serial: view.ownership?.serial });
  } else if (step === "resume") {
    const outcome = await project.resume({
      plan: file,
      operationId,
      ...(lockId ? { breakStaleLock: lockId } : {}),
    });
    say({ outcome });
  } else {
    throw new Error("unknown step " + step);
  }
}
`;
}

interface Step {
  code: number;
  signal: Deno.Signal | null;
  stdout: string;
  all: string;
}

Deno.test(
  "SASL_SSL end to end through mod.ts: init, create, a predicate change whose apply process is SIGKILLed at a random replacement site, resumed through the SDK, output exact, then no-op",
  opts,
  async () => {
    // printed first, so a failure is reproducible with SLUICE_TEST_SEED
    const kill = replacementKillPoint("secure sdk journey");
    const replay = kill.replay;

    await using env = await startEnv({
      connect: false,
      secure: { users: [{ name: "sluice-admin", superUser: true }, { name: "orders-runner" }] },
    });
    const secure = env.secure!;
    const work = await scratchDir();
    let appId: string | null = null;
    try {
      await Deno.writeTextFile(
        join(work, "journey.ts"),
        userScript(new URL("../mod.ts", import.meta.url).href),
      );
      const vars = scramVariables(secure);
      const run = async (args: string[], extra: Record<string, string> = {}): Promise<Step> => {
        const out = await new Deno.Command(Deno.execPath(), {
          args: ["run", ...INSTALL_PERMISSIONS, "journey.ts", ...args],
          cwd: work,
          env: { ...vars, ...extra },
          stdout: "piped",
          stderr: "piped",
          signal: AbortSignal.timeout(STEP_LIMIT_MS),
        }).output();
        const dec = new TextDecoder();
        const stdout = dec.decode(out.stdout);
        return {
          code: out.code,
          signal: out.signal,
          stdout,
          all: `${args[0]}: exit ${out.code} ${replay}\n${stdout}\n${dec.decode(out.stderr)}`,
        };
      };
      const step = async (args: string[]) => {
        const r = await run(args);
        assert.equal(r.code, 0, r.all);
        return JSON.parse(r.stdout.trim().split("\n").at(-1)!);
      };

      // a fresh project by the SDK's initProject, pointed at the SASL_SSL listeners
      const dir = join(work, "orders");
      const init = await step(["init", dir]);
      assert.ok(init.files.some((f: string) => f.endsWith("sluice.yaml")), JSON.stringify(init));
      const p = await pointStarterAt(dir, env, { image: await runnerImageId() });
      await p.editManifest((t) => securedManifest(t, secure, scramSecurityYaml()));
      appId = starterApplicationId(p.name);
      // the runner principal may do exactly what its job needs, and nothing else
      await grantRunnerAcls(env.bootstrapHost, "User:orders-runner", {
        applicationId: appId,
        inputTopic: p.inputTopic,
        outputTopic: p.outputTopic,
      });

      // plan → apply: topics, volume, runner (as orders-runner over SASL_SSL)
      const createPlan = join(dir, "create.plan.json");
      const planned = await step(["plan", dir, createPlan]);
      assert.deepEqual(planned.blockers, [], JSON.stringify(planned));
      const created = await step(["apply", dir, createPlan]);
      assert.equal(created.outcome.kind, "change", JSON.stringify(created));
      const runner = created.outcome.result.runners[0];
      assert.equal(runner.application_id, appId);
      const volume = `${appId}-state`;
      assert.equal((await volumeLabels(volume))["sluice.volume-instance"], runner.volume_instance);
      const first = await containersOf(appId);
      assert.equal(first.length, 1);

      // the old predicate's output, exact (records produced on the plaintext listener)
      const output = outputAcrossChange(env.bootstrapHost, p, appId);
      await output.beforeChange();

      // the predicate change, reviewed (format 6); its apply process dies at the kill point
      await p.setPredicate(CHANGED_PREDICATE);
      const replacePlan = join(dir, "replace.plan.json");
      const reviewed = await step(["plan", dir, replacePlan]);
      assert.equal(reviewed.format, 6, JSON.stringify(reviewed));
      const killed = await run(["apply", dir, replacePlan], kill.env);
      assert.equal(killed.signal, "SIGKILL", `not killed at its site: ${killed.all}`);

      // the operation is pending, the dead process's lock is left: resume breaks it by its ID;
      // killed after the operation's final commit, nothing is pending: the replacement is done
      const shown = await step(["state", dir]);
      if (kill.afterCommit) {
        assert.equal(shown.pending, null, `${replay} ${JSON.stringify(shown)}`);
        assert.ok(shown.serial > 1, `${replay} ${JSON.stringify(shown)}`);
      } else {
        const operationId = shown.pending?.operation_id;
        assert.ok(
          operationId,
          `no pending operation after the kill ${replay}: ${JSON.stringify(shown)}`,
        );
        const lockId = shown.lock?.held ? shown.lock.holder.lock_id : "";
        const resumed = await step(["resume", dir, replacePlan, operationId, lockId]);
        assert.equal(resumed.outcome.kind, "replacement", JSON.stringify(resumed));
        assert.equal(
          resumed.outcome.result.outcome,
          "completed",
          `${replay} ${JSON.stringify(resumed)}`,
        );
        assert.equal(resumed.outcome.result.operation_id, operationId);
      }

      // output exact: the old predicate's records once, then the new predicate's; the same
      // application ID (offsets only forward) and volume instance
      await output.afterChange(replay);
      const candidate = await containersOf(appId);
      assert.equal(candidate.length, 1, replay);
      assert.notEqual(candidate[0], first[0], replay);

      // then a no-op
      const again = await step(["plan", dir]);
      assert.deepEqual([again.actions, again.blockers], [[], []], replay);
    } finally {
      if (appId) await removeApplication(appId);
      await Deno.remove(work, { recursive: true }).catch(() => {});
    }
  },
);
