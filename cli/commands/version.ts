/**
 * `sluice version`: the CLI, Deno, the runner image (`runner/build.sh --check`, or "not built"),
 * Kafka, and the plan, journal and state format versions (`lib/version_report.ts`).
 *
 * @example
 * ```sh
 * sluice version
 * sluice -o json version   # {"ok":true,"command":"version","data":{"cli":"0.2.0",...}}
 * ```
 * @module
 */
import type { Command } from "npm:commander@15.1.0";
import { sluiceVersion } from "../../mod.ts";
import type { VersionReport } from "../../mod.ts";
import { outputFormat, printResult } from "../output.ts";

function render(r: VersionReport): string {
  const list = (xs: readonly number[]) => xs.join(", ");
  return [
    `sluice ${r.cli} (Deno ${r.deno})`,
    `runner image     ${r.runner_image}${
      r.runner_image_note ? ` (${r.runner_image_note.split("\n")[0]})` : ""
    }`,
    `kafka            broker ${r.kafka.broker}, runner kafka-streams ${r.kafka.runner_streams}`,
    `plan files       formats ${list(r.formats.plan)}`,
    `runner artifact  version ${r.formats.runner_artifact}`,
    `journal          control envelope versions ${list(r.formats.journal)}`,
    `state            ownership ${r.formats.ownership}, history ${
      list(r.formats.history)
    }, store identity ${r.formats.store_identity}, PostgreSQL schema ${r.formats.postgres_schema}`,
  ].join("\n");
}

/** Add `version` to the program. */
export function register(program: Command): void {
  program
    .command("version")
    .description("print the versions: CLI, runner image, Kafka, plan, journal and state formats")
    .action(async (_opts: unknown, cmd: Command) => {
      const report = await sluiceVersion();
      printResult(outputFormat(cmd), "version", report, (d) => render(d as VersionReport));
    });
}
