import assert from "node:assert/strict";
import type { SluiceError } from "../errors.ts";
import { sha256Hex } from "./_canonical.ts";
import { checkpointChain } from "../../testing/state/fixtures.ts";
import { type Checkpoint, seal, unseal, validateCheckpointSequence } from "./journal.ts";

const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return (e as SluiceError).code + ": " + (e as Error).message;
  }
  return "ok";
};

Deno.test("a sealed entry round-trips and an edited byte is rejected", () => {
  const e = seal({ name: "old_closed", exit_code: 143 });
  assert.deepEqual(unseal(e, "x"), { exit_code: 143, name: "old_closed" });
  const edited = { ...e, bytes: e.bytes.replace("143", "0") };
  assert.match(code(() => unseal(edited, "x")), /STATE_CORRUPT_JOURNAL: x: entry sha256 mismatch/);
});

Deno.test("a sealed entry must be canonical, not just hash-consistent", () => {
  const bytes = '{ "a": 1 }';
  assert.match(code(() => unseal({ bytes, sha256: sha256Hex(bytes) }, "x")), /not canonical/);
});

Deno.test("the checkpoint chain follows the boundary table", () => {
  const chain = checkpointChain();
  assert.equal(code(() => validateCheckpointSequence(chain)), "ok");
  assert.match(
    code(() => validateCheckpointSequence([chain[0], chain[2]])),
    /old_removed out of order/,
  );
  assert.match(code(() => validateCheckpointSequence([chain[1]])), /out of order/);
  const failure: Checkpoint = { ...chain[4], outcome: "failure" } as Checkpoint;
  assert.equal(code(() => validateCheckpointSequence([chain[0], failure])), "ok");
  assert.match(code(() => validateCheckpointSequence([chain[0], failure, chain[1]])), /terminal/);
  assert.match(code(() => validateCheckpointSequence([chain[0], chain[4]])), /replacement_created/);
});

Deno.test("old_closed keeps the raw exit code and admits only 0 or 143", () => {
  const chain = checkpointChain();
  const zero = { ...chain[1], exit_code: 0 } as Checkpoint;
  assert.equal(code(() => validateCheckpointSequence([chain[0], zero])), "ok");
  const oom = { ...chain[1], exit_code: 137 } as Checkpoint;
  assert.match(code(() => validateCheckpointSequence([chain[0], oom])), /137 is not 0 or 143/);
});
