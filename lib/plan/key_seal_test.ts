// test-needs: postgres
// The keyed seal of plan files (issue 27 item 2): each state store creates one plan-sealing key
// at init and keeps it (local: seal-key.json, mode 0600; PostgreSQL: migration 3's row), a store
// made before keyed seals gets its key at its next init, a corrupt key is refused without
// showing it, and a plan verifies only under the key that sealed it, with nothing changed.
import assert from "node:assert/strict";
import pg from "pg";
import { SluiceError } from "../errors.ts";
import { openStateStore } from "../state/open.ts";
import { parseSealKey, type SealKey } from "../state/seal_key.ts";
import { PG_URL, testSchema } from "../../testing/state/pg_env.ts";
import { keySealOf, verifyKeySeal, verifyPlanAuthority } from "./key_seal.ts";
import { sealPlan } from "./plan_file.ts";
import type { Plan } from "./plan.ts";

const hex = (k: SealKey) => Array.from(k.secret, (b) => b.toString(16).padStart(2, "0")).join("");

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof SluiceError) return e.code;
    throw e;
  }
  return "passed";
}

const PLAN = {
  format: 5,
  project: "orders",
  environment: null,
  mode: "online",
  scope: "full",
  selected: null,
  created_at: "2026-12-05T00:00:00.000Z",
  source_sha256: "a".repeat(64),
  protected_state: { checksum: null, serial: 0 },
  store: { store_id: "s", backend: "local", address: "/s" },
  artifacts: [],
  actions: [],
  blockers: [],
  typed_action: null,
  impact: null,
  preview: null,
} as unknown as Plan;

Deno.test("a local store keeps one plan-sealing key, private to its owner, from its first init", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const config = { backend: "local" as const, dir, project: "orders", environment: null };
    // two concurrent inits of a new store: one identity and one key win, both see them
    const [a, b] = [openStateStore(config), openStateStore(config)];
    await Promise.all([a.init(), b.init()]);
    const [ka, kb] = [await a.sealKey(), await b.sealKey()];
    assert.equal(ka.key_id, kb.key_id);
    assert.equal(hex(ka), hex(kb));
    assert.equal(ka.secret.length, 32);
    assert.notEqual(hex(ka), "0".repeat(64));
    const path = `${dir}/seal-key.json`;
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    // init again changes nothing
    await a.init();
    assert.equal((await a.sealKey()).key_id, ka.key_id);
    assert.deepEqual(parseSealKey(await Deno.readTextFile(path), path).secret, ka.secret);
    // a store made before keyed seals (no key file) gets its key at its next init, once
    await Deno.remove(path);
    await assert.rejects(
      () => a.sealKey(),
      (e: unknown) =>
        e instanceof SluiceError && e.code === "STATE_CORRUPT_STORE" &&
        /plan-sealing key is missing/.test(e.message),
    );
    await b.init();
    const renewed = await a.sealKey();
    assert.notEqual(renewed.key_id, ka.key_id);
    // an edited key is corruption, named without its secret
    const text = await Deno.readTextFile(path);
    for (
      const edited of [
        text.replace(/"secret_hex":"[0-9a-f]{2}/, '"secret_hex":"zz'),
        text.replace(/}$/, " }"),
        text.slice(0, 20),
      ]
    ) {
      await Deno.writeTextFile(path, edited);
      const e = await a.sealKey().then(() => null, (e: unknown) => e);
      assert.ok(e instanceof SluiceError && e.code === "STATE_CORRUPT_STORE", String(e));
      assert.ok(!e.message.includes(hex(renewed).slice(2, 20)), e.message);
    }
    await Promise.all([a.close(), b.close()]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a PostgreSQL store keeps one plan-sealing key in its schema; a store at migration 2 gets it by init", async () => {
  const schema = testSchema();
  const config = {
    backend: "postgres" as const,
    url: PG_URL,
    schema,
    project: "orders",
    environment: null,
  };
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const a = openStateStore(config);
    await a.init();
    const key = await a.sealKey();
    assert.equal(key.secret.length, 32);
    await a.init();
    assert.equal((await a.sealKey()).key_id, key.key_id);
    const b = openStateStore(config);
    assert.equal(hex(await b.sealKey()), hex(key));
    // the schema as migration 2 left it: migration 3 makes a new key, and only once
    await client.query(`DROP TABLE "${schema}".sluice_seal_key`);
    await client.query(`DROP TABLE "${schema}".sluice_history_events`);
    await client.query(`DELETE FROM "${schema}".sluice_migrations WHERE version >= 3`);
    await assert.rejects(() => b.identity(), /at migration 2 of 4/);
    await b.init();
    const migrated = await b.sealKey();
    assert.notEqual(migrated.key_id, key.key_id);
    await a.init();
    assert.equal((await a.sealKey()).key_id, migrated.key_id);
    // two rows, or a secret that is not 32 bytes of hex, is corruption
    await client.query(`UPDATE "${schema}".sluice_seal_key SET secret_hex = 'nothex'`);
    await assert.rejects(
      () => a.sealKey(),
      (e: unknown) =>
        e instanceof SluiceError && e.code === "STATE_CORRUPT_STORE" && /secret/.test(e.message),
    );
    await Promise.all([a.close(), b.close()]);
  } finally {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  }
});

Deno.test("a plan verifies only under the key that sealed its exact content", () => {
  const key: SealKey = {
    key_id: crypto.randomUUID(),
    secret: crypto.getRandomValues(new Uint8Array(32)),
    created_at: "2026-12-05T00:00:00.000Z",
  };
  const { sealed: { seal: _s, ...plan } } = sealPlan(PLAN, key);
  assert.deepEqual(plan.key_seal, keySealOf(PLAN, key));
  assert.equal(code(() => verifyKeySeal(plan, key)), "passed");
  // sealing again over a sealed plan gives the same seal (the keyed seal covers all but itself)
  assert.deepEqual(keySealOf(plan, key), plan.key_seal);
  // any field changed, even one the apply only displays
  assert.equal(code(() => verifyKeySeal({ ...plan, preview: [] }, key)), "PLAN_SEAL_FORGED");
  assert.equal(code(() => verifyKeySeal({ ...plan, project: "other" }, key)), "PLAN_SEAL_FORGED");
  // the same key ID with another secret (a guessed or stolen ID is not the key)
  const guess = { ...key, secret: new Uint8Array(32) };
  assert.equal(code(() => verifyKeySeal(plan, guess)), "PLAN_SEAL_FORGED");
  // a malformed MAC is a forgery, not a crash
  for (const hmac_sha256 of ["", "x", "0".repeat(63), "G".repeat(64)]) {
    const bad = { ...plan, key_seal: { key_id: key.key_id, hmac_sha256 } };
    assert.equal(code(() => verifyKeySeal(bad, key)), "PLAN_SEAL_FORGED", hmac_sha256);
  }
  // another key, or none
  const rotated = { ...key, key_id: crypto.randomUUID() };
  assert.equal(code(() => verifyKeySeal(plan, rotated)), "PLAN_SEAL_KEY_UNKNOWN");
  assert.equal(code(() => verifyKeySeal(PLAN, key)), "PLAN_UNSEALED");
  assert.equal(code(() => verifyKeySeal({ ...plan, key_seal: null }, key)), "PLAN_UNSEALED");
  // the pending operation's own plan (bound by its intent's sha256) finishes without one
  assert.equal(code(() => verifyPlanAuthority(PLAN, "sha-a", "sha-a", key)), "passed");
  assert.equal(code(() => verifyPlanAuthority(PLAN, "sha-a", "sha-b", key)), "PLAN_UNSEALED");
  assert.equal(code(() => verifyPlanAuthority(PLAN, "sha-a", null, key)), "PLAN_UNSEALED");
});
