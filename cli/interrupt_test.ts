// Ctrl-C in the CLI (issue 30 item 6): in a child process, the first SIGINT or SIGTERM aborts the
// run's signal and says so, a second one exits at once (130, 143); and, in this process on the
// fake world, a real TERM sent during an apply's readiness wait ends it with CANCELLED (exit 8) in
// `-o json` and in text, the operation pending, and the same `apply --plan` finishes it. The
// real-world test (a spawned CLI against Docker and Kafka) is
// tests/cli_interrupt_docker_kafka_test.ts.
import assert from "node:assert/strict";
import { interruptLine } from "./interrupt.ts";
import type { Clock } from "../lib/runtime/deps.ts";
import { openCaseWorld } from "../testing/sweep/fixture.ts";
import { readState } from "../testing/sweep/reads.ts";
import { runInProcess } from "../testing/in_process_cli.ts";

// the test runner takes SIGINT for itself (it stops the run): the signals go to a child process
// that listens as a command does and says what it saw
const CHILD = `
import { onInterrupt } from ${JSON.stringify(new URL("./interrupt.ts", import.meta.url).href)};
const interrupt = onInterrupt({ say: (l) => console.log("said: " + l) });
interrupt.signal.addEventListener("abort", () => console.log("aborted"));
console.log("ready");
setTimeout(() => {}, 600_000);
`;

for (const [signal, status] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
  Deno.test(`${signal}: the first aborts the run and says so, a second exits ${status} at once`, async () => {
    const child = new Deno.Command(Deno.execPath(), {
      args: ["eval", "--quiet", CHILD],
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const lines = child.stdout.pipeThrough(new TextDecoderStream()).values();
    const seen: string[] = [];
    let buffered = "";
    /** Read the child's stdout until a line `ok` accepts (bounded by the child's own end). */
    const until = async (ok: (line: string) => boolean) => {
      while (true) {
        const nl = buffered.indexOf("\n");
        if (nl >= 0) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          seen.push(line);
          if (ok(line)) return;
          continue;
        }
        const next = await lines.next();
        if (next.done) assert.fail(`the child ended before the line; it printed ${seen}`);
        buffered += next.value;
      }
    };
    // bounded: a child that never says what is awaited is killed, which ends its output
    const guard = setTimeout(() => child.kill("SIGKILL"), 120_000);
    try {
      await until((l) => l === "ready");
      child.kill(signal);
      await until((l) => l === "aborted");
      assert.ok(seen.includes(`said: ${interruptLine(signal)}`), seen.join("\n"));
      assert.match(interruptLine(signal), /operation stays pending/);
      assert.match(interruptLine(signal), /sluice state resume/);
      child.kill(signal);
      const end = await child.status;
      assert.equal(end.code, status, "the second signal exits at once");
      assert.equal(end.signal, null, "by the listener's exit, not the signal's default");
    } finally {
      clearTimeout(guard);
      try {
        child.kill("SIGKILL");
      } catch {
        // already ended
      }
      await child.status;
      // drain what is left so no resource stays open
      for await (const _ of lines) { /* nothing */ }
    }
  });
}

for (const format of ["json", "text"] as const) {
  Deno.test(`a TERM during apply's readiness wait: CANCELLED, exit 8 (${format}), pending; the same apply finishes it`, async () => {
    // the runner takes a minute of world time to start; the wait's first sleep sends this
    // process a real TERM (the listener SIGINT shares; the test runner keeps SIGINT for itself)
    // and never returns: only the cancellation can end the wait
    await using cw = await openCaseWorld({
      backend: "local",
      seed: `cli-interrupt-${format}`,
      config: { runner_startup_ms: 60_000 },
    });
    const dir = cw.project.dir;
    const planFile = `${dir}/create.plan.json`;
    const planned = await runInProcess(["plan", "--project", dir, "--out", planFile], cw.deps);
    assert.equal(planned.code, 0, planned.stdout + planned.stderr);
    let sent = false;
    const timers: ReturnType<typeof setTimeout>[] = [];
    const termOnWait: Clock = {
      now: () => cw.deps.clock!.now(),
      sleep: () => {
        if (sent) return Promise.reject(new Error("the wait was not cancelled within 120 s"));
        sent = true;
        Deno.kill(Deno.pid, "SIGTERM");
        // a real timer keeps the event loop alive (a signal listener does not); cleared below
        return new Promise((resolve) => timers.push(setTimeout(resolve, 120_000)));
      },
    };
    const o = format === "json" ? ["-o", "json"] : [];
    const r = await runInProcess([...o, "apply", "--project", dir, "--plan", planFile], {
      ...cw.deps,
      clock: termOnWait,
    }).finally(() => timers.forEach(clearTimeout));
    assert.ok(sent, "the wait was reached");
    assert.equal(r.code, 8, r.stdout + r.stderr);
    assert.ok(r.stderr.includes(interruptLine("SIGTERM")), r.stderr);
    const pending = (await readState(cw.state)).control;
    assert.ok(pending, "the operation stays pending");
    let message: string;
    if (format === "json") {
      const env = JSON.parse(r.stdout);
      assert.equal(env.ok, false);
      assert.equal(env.errors[0].code, "CANCELLED");
      assert.equal(env.errors[0].evidence.last_boundary, "create_container");
      assert.equal(env.errors[0].evidence.operation_id, pending.operation_id);
      message = env.errors[0].message;
    } else {
      const line = r.stderr.split("\n").find((l) => l.startsWith("error[CANCELLED]: "));
      assert.ok(line, r.stderr);
      message = line;
    }
    assert.match(message, /cancelled after create_container: it stays pending/);
    assert.match(message, /continue it with 'sluice apply --plan /);

    const again = await runInProcess(
      ["-o", "json", "apply", "--project", dir, "--plan", planFile],
      {
        ...cw.deps,
      },
    );
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.equal(JSON.parse(again.stdout).data.operation_id, pending.operation_id);
    assert.equal((await readState(cw.state)).control, null);
  });
}
