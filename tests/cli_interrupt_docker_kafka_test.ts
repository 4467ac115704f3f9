// test-needs: env
// Needs: Docker, the broker, the runner image (shared environment from tools/test.ts).
// Ctrl-C in the real CLI (issue 30 item 6), a spawned `deno run cli/main.ts` against real Docker
// and Kafka: a SIGINT once the apply has created the runner's container (it then waits for the
// runner to report RUNNING) stops the apply with CANCELLED, exit 8, saying at once that the
// operation stays pending and then how to continue it; `state runner-status` shows it pending;
// a `state resume` given two SIGINTs exits at once (130), like a kill, leaving its local lock;
// `state resume --break-stale-lock` then finishes the same operation.
import assert from "node:assert/strict";
import { sharedEnv } from "../harness/env.ts";
import { runnerImageId, starterProject } from "../harness/project.ts";
import { interruptLine } from "../cli/interrupt.ts";
import {
  assertExit,
  removeApplication,
  sluiceJson,
  starterApplicationId,
} from "./deploy_fixture.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const opts = { sanitizeOps: false, sanitizeResources: false };

/** A CLI run whose output lines are watched as they come, and that can be sent signals. */
function spawnCli(args: string[]) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "-A", "--config", `${ROOT}deno.json`, `${ROOT}cli/main.ts`, ...args],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const out = { stdout: "", stderr: "" };
  const watchers: Array<{ ok: (text: string) => boolean; done: () => void }> = [];
  const pump = async (stream: ReadableStream<Uint8Array>, key: "stdout" | "stderr") => {
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      out[key] += chunk;
      for (const w of [...watchers]) {
        if (w.ok(out.stdout + out.stderr)) {
          watchers.splice(watchers.indexOf(w), 1);
          w.done();
        }
      }
    }
  };
  const pumped = Promise.all([pump(child.stdout, "stdout"), pump(child.stderr, "stderr")]);
  // a run that never prints what is awaited is killed (bounded), which ends the awaits below
  const guard = setTimeout(() => child.kill("SIGKILL"), 600_000);
  const status = child.status.finally(() => clearTimeout(guard));
  return {
    out,
    kill: (signal: Deno.Signal) => child.kill(signal),
    /** Until the output so far matches `re`; rejects if the process ends first. */
    until(re: RegExp): Promise<void> {
      if (re.test(out.stdout + out.stderr)) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        watchers.push({ ok: (t) => re.test(t), done: resolve });
        status.then(async () => {
          await pumped;
          if (!re.test(out.stdout + out.stderr)) {
            reject(new Error(`ended before ${re}:\n${out.stdout}\n${out.stderr}`));
          }
        });
      });
    },
    async end(): Promise<{ code: number; signal: Deno.Signal | null }> {
      const s = await status;
      await pumped;
      return { code: s.code, signal: s.signal };
    },
  };
}

Deno.test(
  "Ctrl-C during a real apply: CANCELLED, exit 8, the operation pending; a second Ctrl-C exits 130 at once; state resume finishes it",
  opts,
  async () => {
    const env = await sharedEnv();
    const p = await starterProject(env, { image: await runnerImageId() });
    const appId = starterApplicationId(p.name);
    const planFile = `${p.dir}/create.plan.json`;
    try {
      assertExit(await sluiceJson(["plan", "--project", p.dir, "--out", planFile]), 0);

      // 1. SIGINT once the container is created: the apply is in the readiness wait
      const apply = spawnCli(["apply", "--project", p.dir, "--plan", planFile]);
      await apply.until(/^\s+[\d.]+s\s+container\s/m);
      apply.kill("SIGINT");
      const applied = await apply.end();
      const { stdout, stderr } = apply.out;
      assert.equal(applied.code, 8, `${stdout}\n${stderr}`);
      assert.ok(stderr.includes(interruptLine("SIGINT")), stderr);
      const cancelled = stderr.split("\n").find((l) => l.startsWith("error[CANCELLED]: "));
      assert.ok(cancelled, stderr);
      assert.match(
        cancelled,
        /^error\[CANCELLED\]: create operation ([0-9a-f-]{36}) cancelled after create_container: it stays pending; continue it with 'sluice apply --plan /,
      );
      assert.match(stdout, /interrupted CANCELLED/, "the run's last event is printed");
      const operationId = cancelled.match(/operation ([0-9a-f-]{36})/)![1];

      // 2. runner-status: the operation is pending, its next row the readiness wait
      const ref = ["--project", p.dir, "--plan", planFile, "--operation-id", operationId];
      const status = await sluiceJson(["state", "runner-status", ...ref]);
      assertExit(status, 0);
      assert.equal(status.envelope.data?.operation_id, operationId);
      assert.notEqual(status.envelope.data?.state, "completed", JSON.stringify(status.envelope));

      // 3. a resume given two SIGINTs exits at once (130): like a kill, its lock stays
      const resume = spawnCli(["state", "resume", ...ref]);
      await resume.until(/^\s+[\d.]+s\s+continued\s/m);
      resume.kill("SIGINT");
      await resume.until(/SIGINT received/);
      resume.kill("SIGINT");
      const killed = await resume.end();
      assert.equal(killed.code, 130, `${resume.out.stdout}\n${resume.out.stderr}`);
      assert.doesNotMatch(resume.out.stderr, /error\[/, "no waiting for a boundary");
      const show = await sluiceJson(["state", "show", "--project", p.dir]);
      assertExit(show, 0);
      const lock = (show.envelope.data as {
        lock: { held: boolean; stale: boolean; holder: { lock_id: string } | null };
      }).lock;
      const pending = (show.envelope.data as { pending_operation: { operation_id: string } | null })
        .pending_operation;
      assert.equal(pending?.operation_id, operationId, "still pending after the exit");

      // 4. the same operation finishes: state resume (breaking the dead process's lock)
      const breakLock = lock.held && lock.stale && lock.holder
        ? ["--break-stale-lock", lock.holder.lock_id]
        : [];
      const done = await sluiceJson(["state", "resume", ...ref, ...breakLock]);
      assertExit(done, 0);
      const after = await sluiceJson(["state", "runner-status", ...ref]);
      assertExit(after, 0);
      assert.equal(after.envelope.data?.state, "completed", JSON.stringify(after.envelope));
    } finally {
      await removeApplication(appId);
    }
  },
);
