/**
 * Deployment commands: `sluice plan`, `sluice apply`, `sluice observe`, `sluice status`.
 * Thin: each opens the project handle (`openProject` from mod.ts), makes one call and renders
 * the result as text (a progress line per event), Markdown (the review, `--format markdown`)
 * or the `-o json` envelope.
 * @module
 */
import type { Command } from "npm:commander@15.1.0";
import {
  redactForDisplay,
  redactText,
  runnerStopOf,
  SluiceError,
  writePlanFile,
} from "../../mod.ts";
import type { ApplyResult, ProjectObservation, ProjectStatus, RuntimeDeps } from "../../mod.ts";
import { formatOption, reviewRenderer } from "./review.ts";
import { credentialsChangedNote, reportReplacement } from "./replacement.ts";
import { observationJson } from "../observation_json.ts";
import { FailureWithResult, outputFormat, printResult } from "../output.ts";
import { openCommandProject } from "./_options.ts";

interface Common {
  project: string;
  env?: string;
}

interface PlanFlags extends Common {
  out?: string;
  offline?: boolean;
  select?: string[];
  preview?: boolean | string;
  base?: string;
  format?: string;
  destroy?: boolean;
  deleteData?: boolean;
}

/** `--preview` (true) or `--preview=N` (a record count). */
function previewFlag(value: boolean | string | undefined): boolean | number | undefined {
  if (value === undefined || typeof value === "boolean") return value;
  const n = Number(value);
  if (!/^[0-9]+$/.test(value) || !Number.isSafeInteger(n)) {
    throw new SluiceError(
      "USAGE_PREVIEW_RECORDS",
      `--preview=N takes a record count, found '${value}'`,
    );
  }
  return n;
}

interface ApplyFlags extends Common {
  plan?: string;
  openlineage?: string;
  breakStaleLock?: string;
}

/** Add the deployment commands to the program. */
export function register(program: Command, deps: RuntimeDeps = {}): void {
  program
    .command("plan")
    .description(
      "compare the project with ownership state and the running system; print the actions and their review",
    )
    .option("--project <dir>", "project directory", ".")
    .option("--env <name>", "environment (required when the manifest declares environments)")
    .option("--out <file>", "write the sealed plan file (apply it with 'apply --plan FILE')")
    .option("--offline", "plan from state alone, without contacting Docker or Kafka")
    .option(
      "--select <model...>",
      "plan only these models: creates and no-ops, never a replacement",
    )
    .option(
      "--preview [records]",
      "preview each changed filter on the last N records of its input (default 1000; read-only)",
    )
    .option("--base <ref>", "also compare with the project at this Git revision (offline plan)")
    .option(
      "--destroy",
      "plan the removal of everything the project owns in the environment (every runner; data-bearing resources are kept unless --delete-data)",
    )
    .option(
      "--delete-data",
      "with --destroy: also delete what the project created — its consumer groups (with their offsets), state volumes and owned topics (with their records); a topic it did not create is kept",
    )
    .addOption(formatOption())
    .action(async (opts: PlanFlags, cmd: Command) => {
      const render = reviewRenderer(cmd, opts.format);
      const preview = previewFlag(opts.preview);
      if (opts.deleteData && !opts.destroy) {
        throw new SluiceError(
          "USAGE_DESTROY_OPTIONS",
          "--delete-data is a choice of a destroy: give it with --destroy",
        );
      }
      await using project = await openCommandProject(deps, opts);
      const result = await project.plan({
        offline: opts.offline,
        select: opts.select ?? null,
        preview,
        base: opts.base,
        file: opts.out ?? null,
        ...(opts.destroy ? { destroy: { deleteData: opts.deleteData === true } } : {}),
      });
      const format = outputFormat(cmd);
      const blockers = result.plan.blockers;
      if (blockers.length > 0) {
        // a blocked plan is never written: apply could only refuse it, and an older file of the
        // same name is left as it was (text: the review, then the error line; json: one failure
        // envelope whose data is the plan and its review, its errors the blockers)
        if (format === "text") console.log(redactText(render(result.review)));
        throw new FailureWithResult(
          new SluiceError(
            blockers[0].code,
            `the plan is blocked (${blockers.length} blocker${blockers.length === 1 ? "" : "s"}): ${
              blockers[0].message
            }${opts.out ? `; it was not written to ${opts.out}` : ""}`,
            {
              evidence: {
                blockers: redactForDisplay(blockers),
                plan_sha256: result.sha256,
                file: null,
              },
            },
          ),
          {
            plan: redactForDisplay(result.plan),
            sha256: result.sha256,
            file: null,
            noop: false,
            review: result.review,
          },
        );
      }
      let written: string | null = null;
      if (opts.out) {
        await writePlanFile(opts.out, result.plan);
        written = opts.out;
      }
      const data = {
        plan: redactForDisplay(result.plan),
        sha256: result.sha256,
        file: written,
        noop: result.noop,
        review: result.review,
      };
      printResult(format, "plan", data, () => render(result.review));
    });

  program
    .command("apply")
    .description("apply a sealed plan file, or a fresh online plan when none is given")
    .option("--project <dir>", "project directory", ".")
    .option("--env <name>", "environment (required when the manifest declares environments)")
    .option("--plan <file>", "a plan file written by 'plan --out'")
    .option(
      "--openlineage <url|file>",
      "send OpenLineage START/COMPLETE/FAIL events of a replacement",
    )
    .option(
      "--break-stale-lock <lock-id>",
      "first remove a stale lock left by a dead process (its ID is in 'state show')",
    )
    .action(async (opts: ApplyFlags, cmd: Command) => {
      const format = outputFormat(cmd);
      await using project = await openCommandProject(deps, opts, format);
      const outcome = await project.apply({
        plan: opts.plan,
        openlineage: opts.openlineage,
        breakStaleLock: opts.breakStaleLock,
      });
      if (outcome.kind === "replacement") {
        reportReplacement(format, "apply", outcome.result);
        return;
      }
      const result = outcome.result;
      printResult(
        format,
        "apply",
        { ...result, plan_sha256: outcome.plan_sha256 },
        () =>
          (result.noop
            ? result.removals?.already_applied
              ? `No changes: runner removal ${result.operation_id} of this plan was already committed (its containers verified absent). Nothing was written.`
              : result.connectors?.verified_committed
              ? `No changes: connector operation ${result.operation_id} of this plan was already committed (verified by exact reads). Nothing was written.`
              : "No changes: the running system matches the project. Nothing was written."
            : `Applied operation ${result.operation_id}: ${result.actions.length} action(s); ownership serial ${result.serial}.`) +
          connectorLines(result.connectors) + removalLines(result.removals) +
          credentialsChangedNote(result.runner_client_changed),
      );
    });

  program
    .command("observe")
    .description(
      "read-only observation of every runner model (containers, volume, Kafka identities, offsets)",
    )
    .option("--project <dir>", "project directory", ".")
    .option("--env <name>", "environment (required when the manifest declares environments)")
    .action(async (opts: Common, cmd: Command) => {
      await using project = await openCommandProject(deps, opts);
      const obs = await project.observe();
      printResult(outputFormat(cmd), "observe", observationJson(obs), () => renderObservation(obs));
    });

  program
    .command("status")
    .description("one line per model: running generation, group state, lag")
    .option("--project <dir>", "project directory", ".")
    .option("--env <name>", "environment (required when the manifest declares environments)")
    .option(
      "--health",
      "exit 4 unless every model has exactly one running, healthy generation (and every Docker endpoint answers)",
    )
    .action(async (opts: Common & { health?: boolean }, cmd: Command) => {
      await using project = await openCommandProject(deps, opts);
      const status = await project.status();
      printResult(outputFormat(cmd), "status", statusJson(status), () => renderStatus(status));
      const sick = status.models.filter((m) => !m.healthy).length +
        (status.connectors ?? []).filter((c) => !c.healthy).length;
      const down = (status.endpoints ?? []).filter((e) => !e.reachable).length;
      if (opts.health && sick + down > 0) {
        throw new SluiceError(
          "BLOCKED_UNHEALTHY",
          [
            ...(sick > 0 ? [`${sick} model(s) or connector(s) are not healthy`] : []),
            ...(down > 0 ? [`${down} Docker endpoint(s) did not answer`] : []),
          ].join("; "),
        );
      }
    });
}

/**
 * The `status -o json` envelope's data as it was before SDK 0.2.0 (the CLI's JSON is stable):
 * each model row's `model` is its application ID, with no `application_id` field.
 */
function statusJson(s: ProjectStatus): unknown {
  return {
    ...s,
    models: s.models.map(({ application_id, model: _name, ...row }) => ({
      model: application_id,
      ...row,
    })),
  };
}

function renderStatus(s: ProjectStatus): string {
  const store = s.state.store;
  return [
    `ok   state ${store ? `${store.backend} store ${store.store_id}` : "store"} (${
      s.state.revision ?? "new"
    }): every stored byte verified`,
  ].concat(
    s.state.pending
      ? [
        `WAIT pending ${s.state.pending.kind} ${s.state.pending.operation_id} (${s.state.pending.status}, last boundary ${
          s.state.pending.last_checkpoint ?? "intent"
        }): see docs/runbook.md`,
      ]
      : [],
  ).concat(
    s.models.flatMap((r) => [
      `${r.healthy ? "ok  " : "FAIL"} ${r.application_id}  ${r.state}  container=${
        r.container ?? "-"
      }  generation=${r.generation ?? "-"}${
        r.candidate_of ? ` (candidate of pending operation ${r.candidate_of})` : ""
      }  group=${r.group}/${r.members}  lag=${r.lag}`,
      ...(r.stop ? [`     stopped: ${r.stop.summary}`] : []),
      ...(r.drift ? [`     drift: ${r.drift.summary}`] : []),
      ...(r.instances ?? []).flatMap((i) => [
        `     instance ${i.instance} on ${i.endpoint ?? "the daemon"}: ${
          i.reachable
            ? `${i.state}  container=${i.container ?? "-"}  generation=${
              i.generation ?? "-"
            }  runner=${i.runner ?? "-"}`
            : `no answer [${i.problem?.code}] ${i.problem?.message}`
        }`,
        ...(i.stop ? [`       stopped: ${i.stop.summary}`] : []),
        ...i.elsewhere.map((x) =>
          `       also on ${x.endpoint ?? "the daemon"}: ${x.container} (not its placed endpoint)`
        ),
      ]),
      ...(r.unplaced ?? []).map((x) =>
        `     not an instance of the set: ${x.container} on ${x.endpoint ?? "the daemon"} (${
          x.instance === null ? "unreadable sluice.instance label" : `instance ${x.instance}`
        })`
      ),
      ...(r.set_problem ? [`     set not ready: ${r.set_problem}`] : []),
      ...(r.unowned_partitions?.length
        ? [
          `     unowned input partitions: ${
            r.unowned_partitions.join(", ")
          } (no member holds them)`,
        ]
        : []),
    ]),
  ).concat(
    (s.endpoints ?? []).map((e) =>
      `${e.reachable ? "ok  " : "FAIL"} endpoint ${e.name}  ${e.endpoint}  ${
        e.reachable ? `daemon ${e.daemon_id}` : `[${e.problem?.code}] ${e.problem?.message}`
      }`
    ),
  ).concat(
    (s.connectors ?? []).map((c) =>
      `${c.healthy ? "ok  " : "FAIL"} connector ${c.connector}  ${c.state}  tasks=${
        c.tasks.map((t) => `${t.id}:${t.state}`).join(" ") || "none"
      }`
    ),
  ).join("\n");
}

const DONE: Record<string, string> = {
  create_connector: "created",
  update_connector: "updated",
  remove_connector: "deleted (the connector object only)",
  release_connector: "already absent, released",
};

/** Per removed runner: what was stopped and removed, and what was kept. */
function removalLines(r: ApplyResult["removals"]): string {
  if (!r || r.already_applied) return "";
  return r.removed.map((x) =>
    `\n  runner ${x.application_id} (model ${x.model}): container ${x.container_name} (${
      x.container_id.slice(0, 12)
    }) ${
      x.exit_code === null ? "found absent" : `closed cleanly (exit ${x.exit_code}) and removed`
    }; kept: volume ${x.kept.volume} (instance ${x.kept.volume_instance}), consumer group ${x.kept.consumer_group} with its committed offsets, topics ${
      x.kept.topics.join(", ")
    }`
  ).join("");
}

/** One line per connector of an apply's connector operation. */
function connectorLines(r: ApplyResult["connectors"]): string {
  if (!r) return "";
  return r.connectors.map((c) =>
    `\n  connector ${c.name}: ${DONE[c.action]}${c.observed_done ? " (found done: observed)" : ""}${
      c.state
        ? `; ${c.state.connector}, tasks ${
          c.state.tasks.map((t) => `${t.id}:${t.state}`).join(" ") || "none"
        }${c.running === false ? " — NOT RUNNING" : ""}`
        : ""
    }`
  ).join("");
}

function renderObservation(obs: ProjectObservation): string {
  const lines = [`cluster ${obs.cluster_id}  docker daemon ${obs.daemon_id}`];
  for (const r of obs.runners) {
    lines.push(`${r.application_id}:`);
    for (const c of r.containers) {
      lines.push(
        `  container ${c.id.slice(0, 12)} ${c.name} ${c.status}${
          c.status === "exited" ? ` (exit ${c.exit_code})` : ""
        } generation=${c.labels.generation ?? "-"} plan=${
          c.plan.matches_label ? "matches label" : "MISMATCH"
        }`,
      );
      const stop = runnerStopOf(c);
      if (stop) lines.push(`    stopped: ${stop.summary}`);
    }
    if (r.containers.length === 0) lines.push("  no container");
    lines.push(
      `  volume ${r.volume.name} ${
        r.volume.exists ? `instance ${r.volume.instance_label}` : "absent"
      }`,
    );
    const k = r.kafka;
    lines.push(
      `  input ${r.target.input_topic} ${
        k.input ? `id ${k.input.id}` : "absent"
      }; output ${r.target.output_topic} ${k.output ? `id ${k.output.id}` : "absent"}`,
    );
    lines.push(
      `  group ${k.group.state} (${k.group.members.length} members), committed ${
        JSON.stringify(k.committed)
      }`,
    );
  }
  for (const c of obs.connectors?.connectors ?? []) {
    lines.push(
      `connector ${c.name} (cluster ${c.cluster}): ${
        c.exists
          ? `${c.status?.state ?? "?"}, tasks ${
            c.status?.tasks.map((t) => `${t.id}:${t.state}`).join(" ") || "none"
          }, config fingerprint ${c.fingerprints.owned ?? c.fingerprints.desired ?? "-"}`
          : "absent"
      }`,
    );
  }
  return lines.join("\n");
}
