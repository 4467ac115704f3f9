// test-needs: postgres
// The intent of a create, a runner removal or a connector change whose acknowledgement is lost
// (issue 26 item 3), on both state backends' real code over the fakes: the apply ends with
// UNKNOWN_OUTCOME_STATE_WRITE (exit 6) naming the operation — its ID, `committed: null`, no
// acknowledged boundary, the commands that tell and continue — and no provider mutation; the
// same plan applied again continues that operation when the intent was recorded, and starts it
// when it was not.
import assert from "node:assert/strict";
import { EXIT, exitCodeFor, SluiceError } from "../../lib/errors.ts";
import type { StateStore } from "../../lib/state/store.ts";
import { openCaseWorld } from "../sweep/fixture.ts";
import { type Journey, prepareJourney, providerMutations } from "./journeys.ts";
import { BACKENDS, openCaseStore } from "./replacement_case.ts";

/** The store, whose beginOperation answers with a lost connection, after (or before) it wrote. */
function losing(store: StateStore, written: boolean): StateStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== "function") return v;
      if (prop !== "beginOperation") return v.bind(target);
      return async (...args: unknown[]) => {
        if (written) await v.apply(target, args);
        throw new Error("injected: connection terminated before the answer");
      };
    },
  });
}

const JOURNEYS: Journey[] = ["create", "remove_runner", "create_connector"];

for (const backend of BACKENDS) {
  for (const journey of JOURNEYS) {
    for (const written of [true, false]) {
      const pipeline = journey.endsWith("_connector");
      const when = written ? "after it was written" : "before it was written";
      Deno.test(`[${backend}] ${journey}: an intent whose answer is lost ${when} is an unknown outcome naming the operation`, async () => {
        await using cw = await openCaseWorld({ backend, seed: crypto.randomUUID(), pipeline });
        const run = await prepareJourney(cw, journey);
        const store = await openCaseStore(cw);
        try {
          const before = providerMutations(cw);
          const error = await run(losing(store, written)).then(
            () => null,
            (e: unknown) => e,
          );
          assert.ok(error instanceof SluiceError, String(error));
          assert.equal(error.code, "UNKNOWN_OUTCOME_STATE_WRITE", error.message);
          assert.equal(exitCodeFor(error), EXIT.UNKNOWN_OUTCOME);
          const ev = error.evidence as {
            operation_id: string;
            committed: null;
            last_boundary: null;
            commands: { continue: string };
          };
          assert.match(ev.operation_id, /^[0-9a-f-]{36}$/);
          assert.equal(ev.committed, null);
          assert.equal(ev.last_boundary, null);
          assert.match(error.message, new RegExp(`operation ${ev.operation_id}`));
          assert.match(error.message, /may or may not be recorded/);
          assert.match(ev.commands.continue, /^sluice apply --plan /);
          assert.equal(providerMutations(cw), before, "a provider was mutated after the intent");
          const pending = (await store.load()).control?.opened.operation_id ?? null;
          assert.equal(pending, written ? ev.operation_id : null);
          // the same plan again: continues the recorded operation, or starts one
          const done = await run(store) as { operation_id: string | null };
          if (written) assert.equal(done.operation_id, ev.operation_id);
          assert.equal((await store.load()).control, null, "the operation stays pending");
          assert.ok(providerMutations(cw) > before, "the plan was not carried out");
        } finally {
          await store.close();
        }
      });
    }
  }
}
