/**
 * Plan files: a {@link Plan} sealed and written as canonical JSON, read back strictly. The
 * seal is the sha256 of the canonical plan without the seal, so any edit — even one byte,
 * even whitespace — is rejected (`PLAN_TAMPERED`). A format-6 plan also carries the checksum
 * of its typed action over the complete action, independent of display redaction. The sha256
 * seal proves the bytes are intact, not who wrote them: the plan's keyed seal (`key_seal.ts`),
 * made with the state store's key when the plan is sealed, is what apply checks for that.
 *
 * Staleness is separate from integrity: {@link verifyPlanCurrent} rejects a sealed plan whose
 * project sources, protected state or state store are no longer the ones it was computed
 * from (`PLAN_STALE_SOURCE`, `PLAN_STALE_STATE`, `PLAN_WRONG_STORE`, `PLAN_WRONG_PROJECT`), and a
 * plan a completed operation already applied (`PLAN_ALREADY_APPLIED`, naming the operation).
 *
 * @example
 * ```ts
 * import { readPlanFile, writePlanFile } from "./plan_file.ts";
 * // const { sha256 } = await writePlanFile("plan.json", plan);
 * // const { plan: back } = await readPlanFile("plan.json");
 * ```
 * @module
 */
import { SluiceError } from "../errors.ts";
import { atomicReplace } from "../fs/atomic_write.ts";
import { canonicalJson, parseCanonicalJson, sha256Hex } from "../artifact/canonical.ts";
import type { StoreIdentity } from "../state/journal.ts";
import type { StateSnapshot } from "../state/store.ts";
import type { Plan } from "./plan.ts";
import { typedActionSha256 } from "./plan.ts";
import { isConnectorAction } from "./connectors.ts";
import { keySealOf } from "./key_seal.ts";
import type { SealKey } from "../state/seal_key.ts";

/** The plan file formats this sluice reads and writes (6: a reviewed replacement; 5: any other). */
export const PLAN_FORMATS: readonly Plan["format"][] = [5, 6];

/** The file form: the plan plus its seal. */
export interface SealedPlan extends Plan {
  seal: string;
}

/**
 * The canonical bytes of a sealed plan and the file's sha256. With `key` (the state store's
 * plan-sealing key) the plan's keyed seal is made first, over the plan as it is now; without it
 * the plan keeps the keyed seal it carries.
 */
export function sealPlan(
  plan: Plan,
  key?: SealKey,
): { bytes: Uint8Array; sha256: string; sealed: SealedPlan } {
  const keyed = key ? { ...plan, key_seal: keySealOf(plan, key) } : plan;
  const seal = sha256Hex(canonicalJson(keyed));
  const sealed: SealedPlan = { ...keyed, seal };
  const bytes = new TextEncoder().encode(canonicalJson(sealed));
  return { bytes, sha256: sha256Hex(bytes), sealed };
}

/**
 * Write a plan file atomically (temp file, fsync, rename, fsync dir). Returns the file's sha256.
 *
 * @example
 * ```ts
 * import { readPlanFile, writePlanFile } from "./plan_file.ts";
 * import type { Plan } from "./plan.ts";
 * async function keep(plan: Plan, path: string) {
 *   const { sha256 } = await writePlanFile(path, plan);
 *   console.log((await readPlanFile(path)).sha256 === sha256); // true
 * }
 * ```
 */
export async function writePlanFile(path: string, plan: Plan): Promise<{ sha256: string }> {
  const { bytes, sha256 } = sealPlan(plan);
  await atomicReplace(path, bytes);
  return { sha256 };
}

/** Parse and verify plan bytes: canonical form, seal, typed-action checksum, known format. */
export function parsePlanBytes(
  bytes: Uint8Array,
  where = "plan file",
): { plan: Plan; sha256: string } {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new SluiceError("PLAN_INVALID", `${where}: not UTF-8`);
  }
  let value: unknown;
  try {
    value = parseCanonicalJson(text);
  } catch (error) {
    // not JSON at all (truncated, empty, another kind of file): unreadable, not an edited plan
    if (!isJson(text)) {
      throw new SluiceError(
        "PLAN_UNREADABLE",
        `${where}: not a plan file sluice wrote (not JSON: ${(error as Error).message})`,
      );
    }
    throw new SluiceError(
      "PLAN_TAMPERED",
      `${where}: not the canonical bytes sluice wrote (${
        (error as Error).message
      }); the plan was edited`,
    );
  }
  const sealed = value as SealedPlan;
  if (sealed === null || typeof sealed !== "object" || Array.isArray(sealed)) {
    throw new SluiceError("PLAN_INVALID", `${where}: not a plan object`);
  }
  if (!PLAN_FORMATS.includes(sealed.format)) {
    throw new SluiceError(
      "PLAN_INVALID",
      `${where}: unknown plan format ${JSON.stringify(sealed.format)}`,
    );
  }
  const { seal, ...plan } = sealed;
  if (typeof seal !== "string" || sha256Hex(canonicalJson(plan)) !== seal) {
    throw new SluiceError(
      "PLAN_TAMPERED",
      `${where}: the seal does not match the content; the plan was edited`,
    );
  }
  if (plan.format === 6) {
    if (
      !plan.typed_action || typedActionSha256(plan.typed_action.action) !== plan.typed_action.sha256
    ) {
      throw new SluiceError(
        "PLAN_TAMPERED",
        `${where}: the typed action does not match its checksum`,
      );
    }
  } else if (plan.typed_action !== null) {
    throw new SluiceError("PLAN_INVALID", `${where}: a format-5 plan carries no typed action`);
  }
  // spec: the first replacement apply carries no other provider mutation; a connector plan
  // never carries a replacement — whatever a (re-sealed) file says, before anything is opened
  const connectorChanges = plan.actions.filter((a) => isConnectorAction(a));
  if (plan.format === 6 && connectorChanges.length > 0) {
    throw new SluiceError(
      "PLAN_REPLACEMENT_WITH_CONNECTOR_CHANGE",
      `${where}: a format-6 replacement plan carries connector changes (${
        connectorChanges.map((a) => `${a.type} ${a.name}`).join(", ")
      }); a replacement is the only mutation of its apply`,
      { evidence: { connectors: connectorChanges.map((a) => a.name) } },
    );
  }
  if (
    connectorChanges.length > 0 && plan.actions.some((a) => a.type === "replace_runner_predicate")
  ) {
    throw new SluiceError(
      "PLAN_CONNECTOR_WITH_REPLACEMENT",
      `${where}: a plan with connector changes (${
        connectorChanges.map((a) => `${a.type} ${a.name}`).join(", ")
      }) carries a predicate replacement; apply them in separate plans`,
      { evidence: { connectors: connectorChanges.map((a) => a.name) } },
    );
  }
  for (const a of connectorChanges) {
    if (
      (a.type === "create_connector" || a.type === "update_connector") &&
      !plan.connectors?.artifacts.some((x) =>
        x.artifact.name === a.name && x.sha256 === a.artifact_sha256
      )
    ) {
      throw new SluiceError(
        "PLAN_INVALID",
        `${where}: ${a.type} ${a.name} has no connector artifact with checksum ${a.artifact_sha256}`,
      );
    }
  }
  if (plan.scope === "selected") {
    // spec: a selected project never carries a replacement, whatever the file says
    if (plan.format === 6 || plan.actions.some((a) => a.type === "replace_runner_predicate")) {
      throw new SluiceError(
        "PLAN_SELECTED_REPLACEMENT",
        `${where}: a plan of selected models (${
          (plan.selected ?? []).join(", ")
        }) carries a predicate replacement; a replacement is applied only from a full-project format-6 plan`,
        { evidence: { selected: plan.selected ?? null } },
      );
    }
  } else if (plan.scope !== "full") {
    throw new SluiceError(
      "PLAN_INVALID",
      `${where}: unknown plan scope ${JSON.stringify(plan.scope)}`,
    );
  }
  // plans written before these sections existed carry none of them
  const read: Plan = {
    ...plan,
    selected: plan.selected ?? null,
    impact: plan.impact ?? null,
    preview: plan.preview ?? null,
  };
  return { plan: read, sha256: sha256Hex(bytes) };
}

/**
 * Read and verify a plan file: its seal, its format and its content (`PLAN_UNREADABLE`,
 * `PLAN_TAMPERED`, `PLAN_INVALID`, exit 3). Returns the plan and the sha256 of the file's bytes.
 *
 * @example
 * ```ts
 * import { readPlanFile } from "./plan_file.ts";
 * const { plan, sha256 } = await readPlanFile("replace.plan.json");
 * console.log(plan.format, plan.actions.length, sha256);
 * ```
 */
export async function readPlanFile(
  path: string,
): Promise<{ plan: Plan; sha256: string; bytes: Uint8Array }> {
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(path);
  } catch (error) {
    throw new SluiceError("PLAN_UNREADABLE", `${path}: ${(error as Error).message}`);
  }
  return { ...parsePlanBytes(bytes, path), bytes };
}

/** What the plan must still match when it is applied. */
export interface CurrentContext {
  project: string;
  environment: string | null;
  sourceSha256: string;
  stateChecksum: string | null;
  store: StoreIdentity;
  /**
   * The completed operation that already applied this plan file (its completion receipt in the
   * audit), when there is one: a repeated apply then names it instead of a stale state.
   */
  appliedBy?: { operation_id: string; recorded_at: string } | null;
}

/**
 * What a plan is checked against now: the store's project and environment, the sources just read,
 * the store's identity and its current ownership checksum (a caller that compares another state
 * overrides `stateChecksum`).
 *
 * @example
 * ```ts
 * import { currentContext } from "./plan_file.ts";
 * // verifyPlanCurrent(plan, currentContext(store, sourceSha256, snap));
 * ```
 */
export function currentContext(
  scope: { project: string; environment: string | null },
  sourceSha256: string,
  snap: Pick<StateSnapshot, "identity" | "ownership">,
): CurrentContext {
  return {
    project: scope.project,
    environment: scope.environment,
    sourceSha256,
    stateChecksum: snap.ownership?.checksum ?? null,
    store: snap.identity,
  };
}

/** The pending operation a plan is applied again to continue. */
export interface Continuing {
  /** What it is, in an operator's words (`runner removal`, `connector operation`, `create`). */
  what: string;
  operation_id: string;
  /** The plan file its intent recorded (sha256; null: none, so no plan file continues it). */
  plan_sha256: string | null;
  /** How to give it up instead, when the journey has a way (a command line). */
  abandon?: string;
}

/**
 * Reject continuing `pending` with this plan file unless it is the one its intent recorded, made
 * for this project and store from the same sources: the one check every journey's continuation
 * runs. The state is not compared (the operation itself may have changed it); the journey's own
 * exact reads decide each step.
 *
 * @example
 * ```ts
 * import { verifyContinuation } from "./plan_file.ts";
 * // verifyContinuation(plan, sha256, now, { what: "runner removal", operation_id, plan_sha256 });
 * ```
 */
export function verifyContinuation(
  plan: Plan,
  planSha256: string,
  now: Omit<CurrentContext, "stateChecksum" | "appliedBy">,
  pending: Continuing,
): void {
  if (pending.plan_sha256 !== planSha256) {
    throw new SluiceError(
      "BLOCKED_OPERATION_PENDING",
      `${pending.what} ${pending.operation_id} is pending from plan ${pending.plan_sha256}; continue it with that plan file (sluice apply --plan FILE), not ${planSha256}${
        pending.abandon ? `, or abandon it (${pending.abandon})` : ""
      }`,
      { evidence: { operation_id: pending.operation_id, plan_sha256: pending.plan_sha256 } },
    );
  }
  verifyPlanCurrent(plan, { ...now, stateChecksum: plan.protected_state.checksum }, pending);
}

/**
 * Reject a plan computed from other sources, state or store than the current ones. Continuing a
 * pending operation (`continuing`), changed sources are to be restored, not planned again.
 */
export function verifyPlanCurrent(
  plan: Plan,
  now: CurrentContext,
  continuing?: Continuing,
): void {
  if (plan.project !== now.project || plan.environment !== now.environment) {
    throw new SluiceError(
      "PLAN_WRONG_PROJECT",
      `the plan is for ${plan.project}${
        plan.environment ? `/${plan.environment}` : ""
      }, not ${now.project}${now.environment ? `/${now.environment}` : ""}`,
    );
  }
  if (plan.store.store_id !== now.store.store_id) {
    throw new SluiceError(
      "PLAN_WRONG_STORE",
      `the plan was made against state store ${plan.store.store_id} (${plan.store.address}), not ${now.store.store_id} (${now.store.address})`,
    );
  }
  // a plan an operation already completed is named as such even when the sources changed since
  // (the next change's edit): the operation is the fact a person acts on, not the staleness
  if (plan.protected_state.checksum !== now.stateChecksum && now.appliedBy) {
    const by = now.appliedBy;
    throw new SluiceError(
      "PLAN_ALREADY_APPLIED",
      `this plan was already applied by operation ${by.operation_id} (completed ${by.recorded_at}); nothing was done. To change the project further, run 'sluice plan --out FILE' and apply that file`,
      {
        evidence: {
          operation_id: by.operation_id,
          completed_at: by.recorded_at,
          planned: plan.protected_state.checksum,
          current: now.stateChecksum,
        },
      },
    );
  }
  if (plan.source_sha256 !== now.sourceSha256) {
    throw new SluiceError(
      "PLAN_STALE_SOURCE",
      continuing
        ? `the project's manifest or SQL changed since ${continuing.what} ${continuing.operation_id} began; restore them to continue it`
        : `the project's manifest or SQL changed since the plan was made (${
          plan.source_sha256.slice(0, 12)
        } → ${now.sourceSha256.slice(0, 12)}); plan again`,
      { evidence: { planned: plan.source_sha256, current: now.sourceSha256 } },
    );
  }
  if (plan.protected_state.checksum !== now.stateChecksum) {
    throw new SluiceError(
      "PLAN_STALE_STATE",
      `the deployment state changed since the plan was made (${
        plan.protected_state.checksum ?? "empty"
      } → ${now.stateChecksum ?? "empty"}); plan again`,
      { evidence: { planned: plan.protected_state.checksum, current: now.stateChecksum } },
    );
  }
}

/** Whether text is JSON at all (canonical or not). */
function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
