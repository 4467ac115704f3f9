/**
 * Compiling the declared connectors of a manifest into ConnectorArtifacts
 * (`lib/artifact/connector.ts`), each with its canonical JSON and checksum. Deterministic: the
 * same manifest, secret values and digest key give the same bytes everywhere. Secret values are
 * read from the injected environment lookup only to compute their keyed digests; they never
 * enter the artifact.
 *
 * @example
 * ```ts
 * import { parseManifest } from "./manifest.ts";
 * import { compileConnectors } from "./compile_connectors.ts";
 * const manifest = parseManifest(await Deno.readTextFile("sluice.yaml"), "sluice.yaml");
 * for (const c of compileConnectors(manifest)) console.log(c.artifact.name, c.sha256);
 * ```
 * @module
 */
import type { SluiceError } from "../errors.ts";
import { diagnostic } from "../expr/diagnostic.ts";
import { canonicalJson, sha256Hex } from "../artifact/canonical.ts";
import {
  CONNECTOR_ARTIFACT_FORMAT,
  CONNECTOR_ARTIFACT_VERSION,
  connectorName,
  secretDigest,
  secretHashKey,
  secretKeyId,
} from "../artifact/connector.ts";
import type { ConnectorArtifact } from "../artifact/connector.ts";
import { parseSecretRefs } from "../artifact/secret_ref.ts";
import { combineErrors } from "./manifest.ts";
import type { Manifest } from "./manifest.ts";
import type { ConnectorDecl } from "./connectors.ts";

/** One compiled connector. */
export interface CompiledConnector {
  connector: string;
  artifact: ConnectorArtifact;
  /** The canonical JSON bytes (as text): what is written and hashed. */
  canonical: string;
  /** sha256 hex of `canonical`: the connector's checksum. */
  sha256: string;
}

/** Options of {@link compileConnectors}. */
export interface CompileConnectorsOptions {
  /** Where secret values and the digest key come from (default: this process's environment). */
  env?: (variable: string) => string | undefined;
}

/**
 * Compile every declared connector, in manifest order. Throws `ENV_SECRET_UNSET` (located at
 * the reference in `sluice.yaml`; several are combined under the same code, with
 * `evidence.diagnostics`) when a referenced variable is unset, and `ENV_SECRET_HASH_KEY_*` when
 * secrets are referenced without a usable digest key. No value is ever shown.
 *
 * @example
 * ```ts
 * const compiled = compileConnectors(manifest, { env: (v) => Deno.env.get(v) });
 * ```
 */
export function compileConnectors(
  manifest: Manifest,
  options: CompileConnectorsOptions = {},
): CompiledConnector[] {
  const lookup = options.env ?? ((v: string) => Deno.env.get(v));
  const errors: SluiceError[] = [];
  for (const c of manifest.connectors) {
    for (const [key, value] of Object.entries(c.config)) {
      for (const ref of parseSecretRefs(value).refs) {
        if (lookup(ref.variable) !== undefined) continue;
        errors.push(
          diagnostic(
            manifest.source,
            "ENV_SECRET_UNSET",
            `connectors.${c.name}.config.${key} references environment variable ${ref.variable}, which is not set`,
            c.configSpans[key],
            { connector: c.name, key, variable: ref.variable },
          ),
        );
      }
    }
  }
  if (errors.length > 0) throw combineErrors(errors, "ENV_SECRET_UNSET");
  const anySecret = manifest.connectors.some((c) =>
    Object.values(c.config).some((v) => parseSecretRefs(v).refs.length > 0)
  );
  const key = anySecret ? secretHashKey(lookup) : null;
  return manifest.connectors.map((c) => {
    const artifact = connectorArtifact(manifest, c, key, lookup);
    const canonical = canonicalJson(artifact);
    return { connector: c.name, artifact, canonical, sha256: sha256Hex(canonical) };
  });
}

function connectorArtifact(
  manifest: Manifest,
  c: ConnectorDecl,
  key: string | null,
  lookup: (variable: string) => string | undefined,
): ConnectorArtifact {
  const name = connectorName(manifest.project, manifest.environment, c.name);
  const topics = [...c.topics].sort();
  const config: Record<string, string> = {
    ...c.config,
    name,
    "connector.class": c.className,
    ...(c.kind === "sink" ? { topics: topics.join(",") } : {}),
  };
  const secrets: Record<string, string> = {};
  for (const value of Object.values(config)) {
    for (const ref of parseSecretRefs(value).refs) {
      secrets[ref.variable] = secretDigest(key!, ref.variable, lookup(ref.variable)!);
    }
  }
  const hasSecrets = Object.keys(secrets).length > 0;
  return {
    format: CONNECTOR_ARTIFACT_FORMAT,
    version: CONNECTOR_ARTIFACT_VERSION,
    project: manifest.project,
    environment: manifest.environment,
    connector: c.name,
    name,
    cluster: c.cluster,
    kind: c.kind,
    topics,
    config,
    secrets,
    secret_key_id: hasSecrets ? secretKeyId(key!) : null,
    ownership: {
      managed_by: "sluice",
      project: manifest.project,
      environment: manifest.environment,
    },
  };
}
