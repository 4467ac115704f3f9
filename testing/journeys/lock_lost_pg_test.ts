// The lock is re-verified before every provider mutation of every journey (issue 26 item 2), on
// both state backends' real code over the fakes: create, the reviewed replacement, runner removal
// and the connector journey. The state store is wrapped so that each verifyLock call is noted with the world's
// mutation count at that moment; every Docker, Kafka or Connect mutation the journey makes must
// follow a verification made after the previous one. Then the lock is lost (verifyLock answers
// STATE_LOCK_LOST from its first call on): the journey stops before any provider mutation.
// (The day-two restart, skip-record and retention's offset move share the same helper,
// lib/runtime/provider_mutation.ts.)
import assert from "node:assert/strict";
import { SluiceError } from "../../lib/errors.ts";
import { readPlanFile } from "../../lib/plan/plan_file.ts";
import { executeReviewed } from "../../lib/runtime/replacement/execute.ts";
import { apply, plan } from "../../lib/runtime/session.ts";
import type { StateStore } from "../../lib/state/store.ts";
import {
  type CaseWorld,
  deployStarter,
  openCaseWorld,
  prepareConnector,
  prepareRemoval,
} from "../sweep/fixture.ts";
import { BACKENDS, openCaseStore } from "./replacement_case.ts";

/** The journey's own provider mutations so far (runner processes and test controls excluded). */
function providerMutations(cw: CaseWorld): number {
  return cw.world.control.mutations().filter((m) =>
    m.by === "docker" || m.by === "kafka" || m.by === "connect"
  ).length;
}

/** The store, with each verifyLock noted (the mutation count then) or, when `lost`, refused. */
function watched(store: StateStore, cw: CaseWorld, lost: boolean) {
  const verifiedAt: number[] = [];
  const proxy = new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== "function") return v;
      if (prop !== "verifyLock") return v.bind(target);
      return async () => {
        if (lost) throw new SluiceError("STATE_LOCK_LOST", "injected: the lock was lost");
        await v.apply(target, []);
        verifiedAt.push(providerMutations(cw));
      };
    },
  });
  return { store: proxy, verifiedAt };
}

type Journey = "create" | "replace" | "remove_runner" | "create_connector" | "update_connector";

/** Set up the journey's world and return how to apply its plan with a given store. */
async function prepare(cw: CaseWorld, journey: Journey) {
  const deps = cw.deps;
  if (journey === "create") {
    const dir = cw.project.dir;
    const r = await plan({ dir, ...deps });
    return (store: StateStore) =>
      apply({ dir, plan: r.plan, planSha256: r.sha256, ...deps, store });
  }
  if (journey === "replace") {
    const d = await deployStarter(cw);
    return async (store: StateStore) => {
      const r = await executeReviewed({
        dir: cw.project.dir,
        planPath: d.planPath,
        ...deps,
        closeTimeoutMs: 60_000,
        readyTimeoutMs: 120_000,
        store,
      });
      // a replacement reports in its result: a lost lock is thrown the same way the others do
      // the replacement reports rather than throws: a lost lock is an unknown outcome (committed
      // null, the store's reason), turned here into the error the other journeys throw
      if (r.committed === null && r.outcome === "unknown" && /lock was lost/.test(r.reason ?? "")) {
        throw new SluiceError("STATE_LOCK_LOST", r.reason ?? "");
      }
      assert.equal(r.committed, true, JSON.stringify(r));
      return r;
    };
  }
  const change = journey === "remove_runner"
    ? await prepareRemoval(cw)
    : await prepareConnector(cw, journey === "create_connector" ? "create" : "update");
  const dir = journey === "remove_runner" ? cw.project.dir : cw.pipeline!.dir;
  const { plan: p, sha256 } = await readPlanFile(change.planPath);
  return (store: StateStore) => apply({ dir, plan: p, planSha256: sha256, ...deps, store });
}

const JOURNEYS: Journey[] = [
  "create",
  "replace",
  "remove_runner",
  "create_connector",
  "update_connector",
];

for (const backend of BACKENDS) {
  for (const journey of JOURNEYS) {
    const pipeline = journey.endsWith("_connector");
    Deno.test(`[${backend}] ${journey}: the lock is verified before each provider mutation`, async () => {
      await using cw = await openCaseWorld({ backend, seed: crypto.randomUUID(), pipeline });
      const run = await prepare(cw, journey);
      const store = await openCaseStore(cw);
      try {
        const w = watched(store, cw, false);
        const before = providerMutations(cw);
        await run(w.store);
        const after = providerMutations(cw);
        assert.ok(after > before, `${journey} made no provider mutation: nothing to check`);
        // mutation i (0-based, counted from the start) needs a verification noted at count i
        for (let i = before; i < after; i++) {
          assert.ok(
            w.verifiedAt.includes(i),
            `${journey}: provider mutation ${i - before + 1} of ${
              after - before
            } was made without verifying the lock after the one before (verified at ${
              JSON.stringify(w.verifiedAt)
            })`,
          );
        }
      } finally {
        await store.close();
      }
    });

    Deno.test(`[${backend}] ${journey}: a lost lock stops the journey before any provider mutation`, async () => {
      await using cw = await openCaseWorld({ backend, seed: crypto.randomUUID(), pipeline });
      const run = await prepare(cw, journey);
      const store = await openCaseStore(cw);
      try {
        const w = watched(store, cw, true);
        const before = providerMutations(cw);
        await assert.rejects(
          run(w.store),
          (e) => e instanceof SluiceError && e.code === "STATE_LOCK_LOST",
        );
        assert.equal(providerMutations(cw), before, `${journey} mutated after losing its lock`);
      } finally {
        await store.close();
      }
    });
  }
}
