/**
 * The worker runs the installed CLI with a fault armed the way the CLI accepts it: the switch
 * with its test-only permission (an armed worker refused at start-up would make every fault
 * case fail before it reaches its site), and refuses nothing else about the command.
 */
import assert from "node:assert/strict";
import { runWorker } from "./worker.ts";

Deno.test("an armed worker is accepted by the CLI's fault-switch guard", async () => {
  const armed = await runWorker(["version", "-o", "json"], { fault: "docker.remove_old:after" });
  assert.equal(armed.code, 0, armed.stderr);
  assert.equal(armed.json?.ok, true);
  assert.equal(armed.fired, null);
});

Deno.test("a site outside the inventory is still refused (exit 2, USAGE_FAULT_POINT)", async () => {
  const bad = await runWorker(["version", "-o", "json"], { fault: "no.such_site:after" });
  assert.equal(bad.code, 2, bad.stderr);
  assert.match(bad.stdout + bad.stderr, /USAGE_FAULT_POINT/);
});
