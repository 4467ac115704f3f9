/**
 * What `sluice version` reports: the CLI, the Deno running it, the runner image, Kafka, and the
 * versions of every file and document format this sluice reads and writes. Each value comes
 * from the constant that defines it (the plan file reader's formats, the journal's envelope
 * versions, the state documents', the PostgreSQL migrations, `scripts/versions.sh`, the runner's
 * `pom.xml`), never re-typed here.
 *
 * @example
 * ```ts
 * import { versionReport } from "./version_report.ts";
 * const r = versionReport({ runnerImage: null });
 * console.log(r.cli, r.runner_image, r.formats.plan);
 * ```
 * @module
 */
import { SluiceError } from "./errors.ts";
import { buildRunnerImage } from "./providers/runner_image.ts";
import { ARTIFACT_VERSION } from "./artifact/artifact.ts";
import { PLAN_FORMATS } from "./plan/plan_file.ts";
import { HISTORY_VERSIONS } from "./state/history.ts";
import { STORE_VERSION } from "./state/identity.ts";
import { CONTROL_VERSIONS } from "./state/journal.ts";
import { OWNERSHIP_VERSION } from "./state/ownership.ts";
import { MIGRATIONS } from "./state/postgres/migrations.ts";
import { pinnedVersions, SLUICE_VERSION } from "./version.ts";
// imported, not read from disk: an SDK imported by http:// URL has no checkout to read from
import RUNNER_POM from "../runner/pom.xml" with { type: "text" };

/** The `data` of `sluice -o json version`. */
export interface VersionReport {
  /** sluice's own version. */
  cli: string;
  /** The Deno that runs it. */
  deno: string;
  /** The runner image ID `runner/build.sh --check` gives, or `not built`. */
  runner_image: string;
  /** Why the image counts as not built (the check's words), when it does. */
  runner_image_note?: string;
  /** Kafka versions. */
  kafka: {
    /** The broker's Apache Kafka version (`scripts/versions.sh`). */
    broker: string;
    /** The runner's kafka-streams version (`runner/pom.xml`). */
    runner_streams: string;
  };
  /** The versions of the files and documents this sluice reads and writes. */
  formats: {
    /** Plan file formats (`lib/plan/plan_file.ts`). */
    plan: readonly number[];
    /** Runner artifact version (`lib/artifact/artifact.ts`). */
    runner_artifact: number;
    /** Operation journal (control) envelope versions (`lib/state/journal.ts`). */
    journal: readonly number[];
    /** History envelope versions (`lib/state/history.ts`). */
    history: readonly number[];
    /** Ownership document version (`lib/state/ownership.ts`). */
    ownership: number;
    /** State store identity record version (`lib/state/identity.ts`). */
    store_identity: number;
    /** The PostgreSQL backend's latest schema migration (`lib/state/postgres/migrations.ts`). */
    postgres_schema: number;
  };
}

/** The runner's `<kafka.version>` property. */
function runnerStreamsVersion(): string {
  const m = /<kafka\.version>([^<]+)<\/kafka\.version>/.exec(RUNNER_POM);
  return m ? m[1] : "unknown";
}

/**
 * The version report, given the runner image check's outcome (`runnerImage` null: not built,
 * with `note` saying why).
 *
 * @example
 * ```ts
 * import { versionReport } from "./version_report.ts";
 * console.log(versionReport({ runnerImage: null, note: "run 'sluice runtime build'" }).runner_image);
 * ```
 */
export function versionReport(
  image: { runnerImage: string | null; note?: string },
): VersionReport {
  return {
    cli: SLUICE_VERSION,
    deno: Deno.version.deno,
    runner_image: image.runnerImage ?? "not built",
    ...(image.runnerImage === null && image.note ? { runner_image_note: image.note } : {}),
    kafka: {
      broker: pinnedVersions().KAFKA_VERSION ?? "unknown",
      runner_streams: runnerStreamsVersion(),
    },
    formats: {
      plan: PLAN_FORMATS,
      runner_artifact: ARTIFACT_VERSION,
      journal: CONTROL_VERSIONS,
      history: HISTORY_VERSIONS,
      ownership: OWNERSHIP_VERSION,
      store_identity: STORE_VERSION,
      postgres_schema: Math.max(...MIGRATIONS.map((m) => m.version)),
    },
  };
}

/**
 * The version report with the runner image as `runner/build.sh --check` finds it (nothing is
 * built): `sluice version`.
 *
 * @example
 * ```ts
 * import { sluiceVersion } from "./version_report.ts";
 * const r = await sluiceVersion();
 * console.log(r.cli, r.runner_image, r.formats.plan);
 * ```
 */
export async function sluiceVersion(): Promise<VersionReport> {
  try {
    return versionReport({ runnerImage: (await buildRunnerImage({ check: true })).image });
  } catch (error) {
    if (error instanceof SluiceError) {
      return versionReport({ runnerImage: null, note: error.message });
    }
    throw error;
  }
}
