/**
 * What the connector parts of `plan` and `apply` start from, gathered once per opened project:
 * the compiled connectors with their resolved, fingerprinted configurations (secret values stay
 * in this process), the removals that apply in the project's environment, the owned records,
 * the exact targets to observe, and the digest key when any of them holds secrets. Null when
 * the project declares, removes and owns no connector (then no Connect cluster is contacted).
 *
 * @example
 * ```ts
 * import { connectorSetup } from "./connector_setup.ts";
 * // const setup = connectorSetup(project.manifest, snap.ownership?.document ?? null);
 * // setup?.targets → what observeConnectors reads
 * ```
 * @module
 */
import {
  artifactSecretKeys,
  desiredConnectorConfig,
  secretHashKey,
} from "../artifact/connector.ts";
import type { DesiredConnector } from "../plan/connectors.ts";
import { compileConnectors } from "../project/compile_connectors.ts";
import type { ConnectorRemovalDecl, Manifest } from "../project/manifest.ts";
import {
  type OwnedConnector,
  ownedConnectors,
  type OwnershipDocument,
} from "../state/ownership.ts";
import type { ConnectorTarget } from "../validation/connector_observation.ts";

/** The connector inputs of one plan. */
export interface ConnectorSetup {
  desired: DesiredConnector[];
  removals: ConnectorRemovalDecl[];
  owned: OwnedConnector[];
  targets: ConnectorTarget[];
  /** The digest key, when a desired or owned configuration holds secrets. */
  hashKey: string | null;
}

/**
 * Gather the connector inputs (see module docs). Throws `ENV_SECRET_UNSET` /
 * `ENV_SECRET_HASH_KEY_*` when a referenced secret or the digest key is missing.
 *
 * @example
 * ```ts
 * // const setup = connectorSetup(project.manifest, null); // null: no connectors at all
 * ```
 */
export function connectorSetup(
  manifest: Manifest,
  ownership: OwnershipDocument | null,
  env: (variable: string) => string | undefined = (v) => Deno.env.get(v),
): ConnectorSetup | null {
  const removals = manifest.connectorRemovals.filter((r) => r.environment === manifest.environment);
  const owned = ownership ? ownedConnectors(ownership) : [];
  if (manifest.connectors.length === 0 && removals.length === 0 && owned.length === 0) {
    return null;
  }
  const desired: DesiredConnector[] = compileConnectors(manifest, { env }).map((c) => ({
    artifact: c.artifact,
    sha256: c.sha256,
    config: desiredConnectorConfig(c.artifact, env),
  }));
  const declared = new Set(manifest.connect.map((c) => c.alias));
  const ownedOf = (name: string) => owned.find((o) => o.name === name);
  const targets: ConnectorTarget[] = [];
  for (const d of desired) {
    targets.push({
      connector: d.artifact.connector,
      name: d.artifact.name,
      cluster: d.artifact.cluster,
      desiredSecretKeys: artifactSecretKeys(d.artifact),
      ownedSecretKeys: ownedOf(d.artifact.name)?.secret_keys ?? null,
    });
  }
  for (const r of removals) {
    targets.push({
      connector: r.logicalName,
      name: r.connector,
      cluster: r.cluster,
      desiredSecretKeys: null,
      ownedSecretKeys: ownedOf(r.connector)?.secret_keys ?? null,
    });
  }
  for (const o of owned) {
    // an owned connector no longer declared is still observed (for the review), when its
    // cluster is still declared
    if (targets.some((t) => t.name === o.name) || !declared.has(o.cluster)) continue;
    targets.push({
      connector: o.connector,
      name: o.name,
      cluster: o.cluster,
      desiredSecretKeys: null,
      ownedSecretKeys: o.secret_keys,
    });
  }
  const needsKey = targets.some((t) =>
    (t.desiredSecretKeys?.length ?? 0) + (t.ownedSecretKeys?.length ?? 0) > 0
  );
  return { desired, removals, owned, targets, hashKey: needsKey ? secretHashKey(env) : null };
}
