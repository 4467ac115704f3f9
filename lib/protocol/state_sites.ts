/**
 * The fault sites of the state layer, declared as data: every durable write of both state
 * backends and every lock operation. The inventory (`lib/protocol/inventory.ts`) composes
 * {@link STATE_SITES} explicitly; nothing is registered by importing this module.
 *
 * - **Local files**: each transition writes its files in a fixed order
 *   ({@link LOCAL_WRITE_ORDER}); each replacement is three durable steps (`temp`: the temp
 *   file written and fsynced, `rename`: renamed over the file, `dirsync`: the directory
 *   fsynced), each removal two (`unlink`, `dirsync`). The store identity is created with
 *   `link` instead of `rename` (exclusive create). Site: `state.local.<transition>.<file>.<step>`.
 * - **PostgreSQL**: each transition is one transaction; its site is the `COMMIT`:
 *   `state.postgres.<transition>.commit`.
 * - **Locks**: `lock.<backend>.acquire|release|break`.
 *
 * @example
 * ```ts
 * import { localWriteSites, STATE_SITES } from "./state_sites.ts";
 * console.log(STATE_SITES.length, localWriteSites("finalize", "history", "replace").rename.name);
 * ```
 * @module
 */
import { type FaultSide, type FaultSite, faultSite, type SiteBackend } from "../fault/site.ts";

/** A state transition that writes (the engine names each write group with one). */
export type StateTransition =
  | "init"
  | "commit_ownership"
  | "begin"
  | "checkpoint"
  | "interrupt"
  | "resume"
  | "finalize"
  | "decide"
  | "abandon"
  | "audit";

/** Every transition, in the order the docs list them. */
export const STATE_TRANSITIONS: readonly StateTransition[] = [
  "init",
  "commit_ownership",
  "begin",
  "checkpoint",
  "interrupt",
  "resume",
  "finalize",
  "decide",
  "abandon",
  "audit",
];

/** A file the local backend writes. */
export type LocalFile = "store" | "ownership" | "control" | "history";

/** How a file is written: replaced atomically, removed, or created exclusively. */
export type LocalWriteKind = "replace" | "remove" | "create";

/**
 * The local backend's files per transition, in write order (a write group may skip files it
 * does not change, e.g. a retried finalize writes only ownership and clear, but never reorders
 * them). The audit (history) is written before what it records, control last when cleared.
 */
export const LOCAL_WRITE_ORDER: Readonly<
  Record<StateTransition, ReadonlyArray<{ file: LocalFile; kind: LocalWriteKind }>>
> = {
  init: [{ file: "store", kind: "create" }],
  commit_ownership: [
    { file: "history", kind: "replace" },
    { file: "ownership", kind: "replace" },
    { file: "control", kind: "remove" },
  ],
  begin: [{ file: "control", kind: "replace" }],
  checkpoint: [{ file: "control", kind: "replace" }],
  interrupt: [{ file: "control", kind: "replace" }, { file: "history", kind: "replace" }],
  resume: [{ file: "history", kind: "replace" }, { file: "control", kind: "replace" }],
  finalize: [
    { file: "history", kind: "replace" },
    { file: "ownership", kind: "replace" },
    { file: "control", kind: "remove" },
  ],
  // control first (the decision is what the table reads); a lost history write is caught up
  // by the next history write, as for an interruption
  decide: [{ file: "control", kind: "replace" }, { file: "history", kind: "replace" }],
  // the audit first: an archived abandonment beside a still-present control is retried as a
  // clear only
  abandon: [{ file: "history", kind: "replace" }, { file: "control", kind: "remove" }],
  // a day-two audit event (restart, skipped record): the history alone, before the provider
  // change it records
  audit: [{ file: "history", kind: "replace" }],
};

/** The durable steps of one write kind, in order. */
export const WRITE_STEPS: Readonly<Record<LocalWriteKind, readonly string[]>> = {
  replace: ["temp", "rename", "dirsync"],
  create: ["temp", "link", "dirsync"],
  remove: ["unlink", "dirsync"],
};

/**
 * The step of each write kind after which a fresh reader sees the write: the rename or link
 * puts the new file in place, the unlink takes the file away. The directory fsync after it makes
 * that survive a power loss; a process death between the two leaves what a reader already sees.
 */
export const VISIBLE_STEP: Readonly<Record<LocalWriteKind, string>> = {
  replace: "rename",
  create: "link",
  remove: "unlink",
};

const STEP_WORDS: Record<string, string> = {
  temp: "write and fsync the temp file of",
  rename: "rename the temp file over",
  link: "hard-link the temp file into place as (exclusive create)",
  dirsync: "fsync the directory after writing",
  unlink: "unlink",
};

const LOCAL_WHERE = new URL("../state/local/local_primitive.ts", import.meta.url).href;
const PG_WHERE = new URL("../state/postgres/pg_primitive.ts", import.meta.url).href;

function localSite(t: StateTransition, file: LocalFile, step: string): FaultSite {
  const words = step === "dirsync" && file === "control" &&
      LOCAL_WRITE_ORDER[t].find((w) => w.file === file)?.kind === "remove"
    ? "fsync the directory after unlinking"
    : STEP_WORDS[step];
  return faultSite({
    name: `state.local.${t}.${file}.${step}`,
    kind: "state",
    description: `${t}: ${words} ${file}.json`,
    where: LOCAL_WHERE,
    backends: ["local"],
  });
}

function pgSite(t: StateTransition): FaultSite {
  return faultSite({
    name: `state.postgres.${t}.commit`,
    kind: "state",
    description: t === "init"
      ? "init: COMMIT the schema migrations and store identity"
      : `${t}: COMMIT the transaction writing its documents`,
    where: PG_WHERE,
    backends: ["postgres"],
  });
}

/** A lock operation. */
export type LockOperation = "acquire" | "release" | "break";

// PostgreSQL has no break site: the server releases a dead session's advisory lock, and the
// next acquire overwrites the metadata row it left (docs/decisions.md D13)
const LOCK_WORDS: Record<SiteBackend, Partial<Record<LockOperation, string>>> = {
  local: {
    acquire: "create lock.json exclusively (temp file, fsync, link, directory fsync)",
    release: "remove our own lock.json (unlink, directory fsync)",
    break: "remove a stale lock.json of a dead process (unlink, directory fsync)",
  },
  postgres: {
    acquire: "take the session advisory lock and write its sluice_locks row",
    release: "delete our sluice_locks row and release the advisory lock",
  },
};

function lockSite(backend: SiteBackend, op: LockOperation): FaultSite {
  return faultSite({
    name: `lock.${backend}.${op}`,
    kind: "lock",
    description: LOCK_WORDS[backend][op]!,
    where: backend === "local" ? LOCAL_WHERE : PG_WHERE,
    backends: [backend],
  });
}

/** The sites of one local write: one per durable step, keyed by step name. */
export type WriteSites = Readonly<Record<string, FaultSite>>;

const LOCAL: ReadonlyMap<string, WriteSites> = new Map(
  STATE_TRANSITIONS.flatMap((t) =>
    LOCAL_WRITE_ORDER[t].map((w) =>
      [
        `${t}/${w.file}/${w.kind}`,
        Object.freeze(
          Object.fromEntries(WRITE_STEPS[w.kind].map((s) => [s, localSite(t, w.file, s)])),
        ),
      ] as const
    )
  ),
);

const PG: ReadonlyMap<StateTransition, FaultSite> = new Map(
  STATE_TRANSITIONS.map((t) => [t, pgSite(t)] as const),
);

const LOCKS: Readonly<Record<SiteBackend, Readonly<Partial<Record<LockOperation, FaultSite>>>>> = {
  local: {
    acquire: lockSite("local", "acquire"),
    release: lockSite("local", "release"),
    break: lockSite("local", "break"),
  },
  postgres: {
    acquire: lockSite("postgres", "acquire"),
    release: lockSite("postgres", "release"),
  },
};

/** Every fault site of the state layer (both backends, writes and locks). */
export const STATE_SITES: readonly FaultSite[] = Object.freeze([
  ...[...LOCAL.values()].flatMap((s) => Object.values(s)),
  ...PG.values(),
  ...Object.values(LOCKS.local),
  ...Object.values(LOCKS.postgres),
]);

/**
 * The sites of one local file write of a transition. Throws when the write is not declared
 * in {@link LOCAL_WRITE_ORDER} (a programming error: every durable write is a site).
 *
 * @example
 * ```ts
 * import { localWriteSites } from "./state_sites.ts";
 * localWriteSites("begin", "control", "replace").temp.name; // state.local.begin.control.temp
 * ```
 */
export function localWriteSites(
  transition: StateTransition,
  file: LocalFile,
  kind: LocalWriteKind,
): WriteSites {
  const sites = LOCAL.get(`${transition}/${file}/${kind}`);
  if (!sites) {
    throw new Error(`undeclared local state write: ${transition} ${kind} ${file}.json`);
  }
  return sites;
}

/**
 * The commit site of a PostgreSQL transition.
 *
 * @example
 * ```ts
 * import { pgCommitSite } from "./state_sites.ts";
 * pgCommitSite("finalize").name; // state.postgres.finalize.commit
 * ```
 */
export function pgCommitSite(transition: StateTransition): FaultSite {
  return PG.get(transition)!;
}

/**
 * The site of a lock operation. Throws for PostgreSQL's break, which is no site (D13): the
 * server releases a dead session's advisory lock, and the next acquire overwrites its row.
 *
 * @example
 * ```ts
 * import { lockOperationSite } from "./state_sites.ts";
 * lockOperationSite("local", "break").name; // lock.local.break
 * ```
 */
export function lockOperationSite(backend: SiteBackend, op: LockOperation): FaultSite {
  const site = LOCKS[backend][op];
  if (!site) throw new Error(`lock.${backend}.${op} is not a fault site`);
  return site;
}

/** A fault point of the state layer on the one backend it exists on. */
export interface StatePoint {
  site: string;
  side: FaultSide;
  backend: SiteBackend;
}

/**
 * The state layer's own points that leave a durable state no protocol site leaves, once each.
 * A transition's complete state (its last write made visible, a PostgreSQL commit returned) and
 * its untouched state are what the protocol site wrapping it leaves when killed after or before
 * it, so these are the states between:
 *
 * - every local file write of a multi-file transition but its last, just after the step that
 *   makes it visible ({@link VISIBLE_STEP}: that file in place, the next not yet written — e.g. a
 *   finalize's receipt without its ownership); a PostgreSQL transition is one commit, with no
 *   state between;
 * - the store's creation (`init`), written by the first `plan`, which no protocol site wraps;
 * - a lock acquire after it (a dead holder), a release before it (a dead holder whose work is
 *   done), the local break after it.
 *
 * The crash sweep's `suite` tier arms each of them (testing/sweep/cases.ts); its `full` tier, and
 * the real matrix's, arm every step of every site on both sides.
 *
 * @example
 * ```ts
 * import { stateOnlyPoints } from "./state_sites.ts";
 * console.log(stateOnlyPoints().some((p) => p.site === "lock.local.break")); // true
 * ```
 */
export function stateOnlyPoints(): StatePoint[] {
  const points: StatePoint[] = [];
  for (const t of STATE_TRANSITIONS) {
    const writes = LOCAL_WRITE_ORDER[t];
    const between = t === "init" ? writes : writes.slice(0, -1);
    for (const w of between) {
      const site = localWriteSites(t, w.file, w.kind)[VISIBLE_STEP[w.kind]].name;
      points.push({ site, side: "after", backend: "local" });
    }
  }
  for (const backend of ["local", "postgres"] as const) {
    points.push({ site: lockOperationSite(backend, "acquire").name, side: "after", backend });
    points.push({ site: lockOperationSite(backend, "release").name, side: "before", backend });
  }
  points.push({ site: lockOperationSite("local", "break").name, side: "after", backend: "local" });
  return points;
}
