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
import type { StateStore } from "../../lib/state/store.ts";
import { type CaseWorld, openCaseWorld } from "../sweep/fixture.ts";
import { JOURNEYS, prepareJourney, providerMutations } from "./journeys.ts";
import { BACKENDS, openCaseStore } from "./replacement_case.ts";

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

for (const backend of BACKENDS) {
  for (const journey of JOURNEYS) {
    const pipeline = journey.endsWith("_connector");
    Deno.test(`[${backend}] ${journey}: the lock is verified before each provider mutation`, async () => {
      await using cw = await openCaseWorld({ backend, seed: crypto.randomUUID(), pipeline });
      const run = await prepareJourney(cw, journey);
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
      const run = await prepareJourney(cw, journey);
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
