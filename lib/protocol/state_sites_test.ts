import assert from "node:assert/strict";
import { siteLocation } from "../fault/site.ts";
import { canonicalJson } from "../state/_canonical.ts";
import { encodeBody } from "../state/_stored.ts";
import { LocalPrimitive } from "../state/local/local_primitive.ts";
import {
  LOCAL_WRITE_ORDER,
  localWriteSites,
  lockOperationSite,
  pgCommitSite,
  STATE_SITES,
  STATE_TRANSITIONS,
  WRITE_STEPS,
} from "./state_sites.ts";

Deno.test("state sites: unique names saying backend, transition, file and step", () => {
  const names = STATE_SITES.map((s) => s.name);
  assert.equal(new Set(names).size, names.length);
  const local = STATE_TRANSITIONS.flatMap((t) =>
    LOCAL_WRITE_ORDER[t].flatMap((w) =>
      WRITE_STEPS[w.kind].map((s) => `state.local.${t}.${w.file}.${s}`)
    )
  );
  const pg = STATE_TRANSITIONS.map((t) => `state.postgres.${t}.commit`);
  // a PostgreSQL lock ends with its session: no break site (D13)
  const locks = ["local", "postgres"].flatMap((b) =>
    (b === "local" ? ["acquire", "release", "break"] : ["acquire", "release"]).map((o) =>
      `lock.${b}.${o}`
    )
  );
  assert.deepEqual([...names].sort(), [...local, ...pg, ...locks].sort());
  assert.equal(names.length, 66);
  for (const s of STATE_SITES) {
    assert.equal(s.backends?.length, 1, s.name);
    assert.ok(s.name.includes(`.${s.backends![0]}.`), s.name);
    assert.equal(s.kind, s.name.startsWith("lock.") ? "lock" : "state");
    assert.match(siteLocation(s), /^lib\/state\/(local\/local|postgres\/pg)_primitive\.ts$/);
    assert.ok(s.description.length > 10);
  }
  assert.equal(
    localWriteSites("finalize", "control", "remove").unlink.name,
    "state.local.finalize.control.unlink",
  );
  assert.equal(pgCommitSite("resume").name, "state.postgres.resume.commit");
  assert.equal(lockOperationSite("local", "break").name, "lock.local.break");
  // a PostgreSQL lock ends with its session: no break site (D13)
  assert.throws(() => lockOperationSite("postgres", "break"), /not a fault site/);
  assert.throws(
    () => localWriteSites("begin", "history", "replace"),
    /undeclared local state write/,
  );
});

Deno.test("local commit refuses a write group outside its transition's declared order", async () => {
  const dir = await Deno.makeTempDir({ prefix: "sluice_sites_" });
  try {
    const p = new LocalPrimitive(dir, "orders", null);
    await p.init();
    const owner = {
      lock_id: crypto.randomUUID(),
      project: "orders",
      environment: null,
      actor: "t",
      host: "h",
      pid: Deno.pid,
      acquired_at: "2026-11-29T10:00:00.000Z",
    };
    await p.acquireLock(owner);
    const write = (name: "ownership" | "history") => ({
      name,
      body: encodeBody({ x: canonicalJson(name) }, 1),
      expectedSha256: null,
      expectedRevision: 0,
    });
    // finalize writes history before ownership, never the reverse
    await assert.rejects(
      p.commit([write("ownership"), write("history")], owner.lock_id, "finalize"),
      /finalize: replace history.json is not in its declared write order/,
    );
    assert.deepEqual(await p.read(), { ownership: null, control: null, history: null });
    await p.releaseLock(owner.lock_id);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
