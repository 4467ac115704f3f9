import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { SluiceError } from "../../lib/errors.ts";
import { storeConfigFromFlags } from "./state.ts";

const MAIN = fileURLToPath(new URL("../main.ts", import.meta.url));

async function sluice(...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stdout: new TextDecoder().decode(out.stdout) };
}

Deno.test("state flags name exactly one store and never invent an environment", () => {
  assert.deepEqual(storeConfigFromFlags({ stateDir: "/s", projectName: "orders" }), {
    backend: "local",
    dir: "/s",
    project: "orders",
    environment: null,
  });
  const pg = storeConfigFromFlags({ pgUrl: "postgres://h/db", projectName: "o", env: "prod" });
  assert.equal(pg.backend, "postgres");
  assert.equal(pg.environment, "prod");
  assert.throws(
    () => storeConfigFromFlags({ stateDir: "/s", pgUrl: "postgres://h/db", projectName: "o" }),
    (e: unknown) => e instanceof SluiceError && e.code === "USAGE_STATE",
  );
  assert.throws(
    () => storeConfigFromFlags({ stateDir: "/s" }),
    (e: unknown) => e instanceof SluiceError && e.code === "USAGE_PROJECT",
  );
});

Deno.test("sluice state init then state show -o json on a local store", async () => {
  const dir = await Deno.makeTempDir({ prefix: "sluice_cli_state_" });
  try {
    const init = await sluice("state", "init", "--state-dir", dir, "--project-name", "orders");
    assert.equal(init.code, 0, init.stdout);
    const show = await sluice(
      "-o",
      "json",
      "state",
      "show",
      "--state-dir",
      dir,
      "--project-name",
      "orders",
    );
    assert.equal(show.code, 0);
    const env = JSON.parse(show.stdout);
    assert.equal(env.ok, true);
    assert.equal(env.command, "state show");
    assert.equal(env.data.environment, null);
    assert.equal(env.data.lock.held, false);
    assert.equal(env.data.pending_operation, null);
    assert.equal(env.data.history.envelope_version, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sluice state show --project DIR uses the store declared in sluice.yaml", async () => {
  const dir = await Deno.makeTempDir({ prefix: "sluice_cli_project_" });
  try {
    const { initProject } = await import("../../lib/project/starter.ts");
    await initProject(dir);
    const init = await sluice("state", "init", "--project", dir);
    assert.equal(init.code, 0, init.stdout);
    const show = await sluice("-o", "json", "state", "show", "--project", dir);
    const env = JSON.parse(show.stdout);
    assert.equal(env.ok, true, show.stdout);
    assert.equal(env.data.environment, null);
    assert.equal(env.data.store.backend, "local");
    assert.ok(env.data.store.address.startsWith(dir));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sluice state rotate-seal-key replaces the key and prints key IDs, never the secret", async () => {
  const dir = await Deno.makeTempDir({ prefix: "sluice_cli_rotate_" });
  try {
    const flags = ["--state-dir", dir, "--project-name", "orders"];
    // nothing to rotate before the store exists
    const early = await sluice("-o", "json", "state", "rotate-seal-key", ...flags);
    assert.notEqual(early.code, 0);
    assert.equal((await sluice("state", "init", ...flags)).code, 0);
    const before = JSON.parse(await Deno.readTextFile(`${dir}/seal-key.json`));
    const r = await sluice("-o", "json", "state", "rotate-seal-key", ...flags);
    assert.equal(r.code, 0, r.stdout);
    const data = JSON.parse(r.stdout).data;
    const after = JSON.parse(await Deno.readTextFile(`${dir}/seal-key.json`));
    assert.equal(data.previous_key_id, before.key_id);
    assert.equal(data.key_id, after.key_id);
    assert.notEqual(after.key_id, before.key_id);
    assert.notEqual(after.secret_hex, before.secret_hex);
    for (const secret of [before.secret_hex, after.secret_hex]) {
      assert.equal(r.stdout.includes(secret), false, "a key's secret was printed");
    }
    assert.equal((await Deno.stat(`${dir}/seal-key.json`)).mode! & 0o777, 0o600);
    const text = await sluice("state", "rotate-seal-key", ...flags);
    assert.equal(text.code, 0);
    assert.match(text.stdout, new RegExp(`${after.key_id} → [0-9a-f-]{36}; plan files sealed`));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
