/**
 * Wires the state contract suite to the local files backend.
 * @module
 */
import { join } from "node:path";
import { canonicalJson } from "../_canonical.ts";
import {
  type ContractBackend,
  PROJECT,
  stateStoreContract,
} from "../../../testing/state/contract_suite.ts";
import { openStateStore } from "../open.ts";
import type { DocName } from "../primitive.ts";
import type { StateStore } from "../store.ts";

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
    async cleanup() {
      for (const s of opened) await s.close().catch(() => {});
      await Deno.remove(dir, { recursive: true });
    },
  };
}

stateStoreContract("local", makeLocalBackend);
