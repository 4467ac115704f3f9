/**
 * Wires the state contract suite to the local files backend.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { SluiceError } from "../../errors.ts";
import { emptyOwnership } from "../ownership.ts";
import { canonicalJson } from "../_canonical.ts";
import { newStoreRecord, sealStoreRecord } from "../identity.ts";
import {
  type ContractBackend,
  PROJECT,
  stateStoreContract,
} from "../../../testing/state/contract_suite.ts";
import { openStateStore } from "../open.ts";
import type { DocName } from "../primitive.ts";
import type { StateStore } from "../store.ts";

async function readOrNull(path: string): Promise<string | null> {
  try {
    return await Deno.readTextFile(path);
  } catch {
    return null;
  }
}

async function makeLocalBackend(): Promise<ContractBackend> {
  const dir = await Deno.makeTempDir({ prefix: "sluice_state_" });
  const opened: StateStore[] = [];
  return {
    atomic: false,
    open(project = PROJECT, environment: string | null = null) {
      const s = openStateStore({ backend: "local", dir, project, environment });
      opened.push(s);
      return s;
    },
    async rawRead(name: DocName) {
      try {
        return await Deno.readTextFile(join(dir, PROJECT, `${name}.json`));
      } catch {
        return null;
      }
    },
    async rawWrite(name: DocName, body: string | null) {
      if (body === null) await Deno.remove(join(dir, PROJECT, `${name}.json`));
      else await Deno.writeTextFile(join(dir, PROJECT, `${name}.json`), body);
    },
    async loseLock(store: StateStore) {
      // someone broke the lock and took it: the file now holds another lock UUID
      const status = await store.inspectLock();
      await Deno.writeTextFile(
        join(dir, PROJECT, "lock.json"),
        canonicalJson({ ...status.holder, lock_id: crypto.randomUUID(), actor: "intruder" }),
      );
    },
    identityFields: ["format", "version", "store_id", "created_at", "sha256"],
    rawIdentity: () => readOrNull(join(dir, "store.json")),
    async tamperIdentity(field: string) {
      const path = join(dir, "store.json");
      const text = await Deno.readTextFile(path);
      const rec = JSON.parse(text);
      const flip = (v: string, at: number) =>
        v.slice(0, at) + (v[at] === "1" ? "2" : "1") + v.slice(at + 1);
      const edited = field === "format"
        ? text.replace('"format":"sluice.store"', '"format":"sluice.stors"')
        : field === "version"
        ? text.replace('"version":2', '"version":3')
        : field === "store_id"
        ? text.replace(rec.store_id, flip(rec.store_id, 0))
        : field === "created_at"
        ? text.replace(rec.created_at, flip(rec.created_at, 3))
        : text.replace(rec.sha256.created_at, flip(rec.sha256.created_at, 0));
      await Deno.writeTextFile(path, edited);
    },
    async forgeIdentity(storeId: string) {
      const path = join(dir, "store.json");
      const rec = JSON.parse(await Deno.readTextFile(path));
      const forged = sealStoreRecord(newStoreRecord(storeId, rec.created_at));
      await Deno.writeTextFile(path, canonicalJson(forged));
    },
    async restoreIdentity(raw: string) {
      await Deno.writeTextFile(join(dir, "store.json"), raw);
    },
    async cleanup() {
      for (const s of opened) await s.close().catch(() => {});
      await Deno.remove(dir, { recursive: true });
    },
  };
}

stateStoreContract("local", makeLocalBackend);

Deno.test("local: init never re-creates a missing identity over existing state", async () => {
  const dir = await Deno.makeTempDir({ prefix: "sluice_state_" });
  try {
    const store = openStateStore({ backend: "local", dir, project: PROJECT, environment: null });
    await store.init();
    await store.acquireLock({ actor: "t" });
    await store.commitOwnership(await store.load(), {
      ...emptyOwnership(PROJECT, null),
      serial: 1,
    });
    await store.close();
    await Deno.remove(join(dir, "store.json"));
    const again = openStateStore({ backend: "local", dir, project: PROJECT, environment: null });
    await assert.rejects(
      again.init(),
      (e: unknown) =>
        e instanceof SluiceError && e.code === "STATE_CORRUPT_STORE" &&
        /identity is missing but .* holds ownership, history/.test(e.message),
    );
    assert.equal(await readOrNull(join(dir, "store.json")), null, "nothing was written");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
