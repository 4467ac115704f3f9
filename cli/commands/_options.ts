/**
 * What the commands that act on a project share: their common options, declared once (the same
 * flag, the same help text everywhere), and opening the project a command names.
 * @module
 */
import type { Command } from "npm:commander@15.1.0";
import {
  openProject,
  type OpenProjectOptions,
  type RuntimeDeps,
  type SluiceProject,
} from "../../mod.ts";
import { type Interrupt, onInterrupt } from "../interrupt.ts";
import { type OutputFormat, progressPrinter } from "../output.ts";

/** `--project DIR` (default: the current directory) and `--env NAME`. */
export function projectOptions(c: Command): Command {
  return c.option("--project <dir>", "project directory", ".")
    .option("--env <name>", "environment (required when the manifest declares environments)");
}

/** `--reason TEXT`, required: an audited command says why. */
export function reasonOption(c: Command): Command {
  return c.requiredOption("--reason <text>", "why (recorded in the audit with who and when)");
}

/** `--confirm-env NAME`: the environment policy's confirmation. */
export function confirmEnvOption(c: Command): Command {
  return c.option(
    "--confirm-env <name>",
    "repeat the environment name where the environment policy demands it",
  );
}

/** `--break-stale-lock LOCK_ID`: remove a dead process's lock first. */
export function breakLockOption(c: Command): Command {
  return c.option(
    "--break-stale-lock <lock-id>",
    "first remove a stale lock left by a dead process (see 'state show')",
  );
}

/**
 * The options of an audited command that acts under the deployment lock (`restart`,
 * `skip-record`, `acknowledge-drift`, the operator's decisions): {@link projectOptions},
 * {@link reasonOption}, {@link confirmEnvOption} and {@link breakLockOption}.
 */
export function auditedOptions(c: Command): Command {
  return breakLockOption(confirmEnvOption(reasonOption(projectOptions(c))));
}

/** The parsed flags of {@link auditedOptions}. */
export interface AuditedFlags {
  project: string;
  env?: string;
  reason: string;
  confirmEnv?: string;
  breakStaleLock?: string;
}

/**
 * Open the project a command names (`--project`, `--env`); with `format`, its progress is
 * printed in that format and Ctrl-C (SIGINT, SIGTERM) cancels its run at the next durable
 * boundary (`cli/interrupt.ts`) until the handle is disposed (a mutating command), else nothing
 * is printed and a signal ends the process as usual (a read).
 */
export async function openCommandProject(
  deps: RuntimeDeps,
  opts: { project: string; env?: string },
  format?: OutputFormat,
): Promise<SluiceProject> {
  const open = (more: Partial<OpenProjectOptions>) =>
    openProject({ ...deps, dir: opts.project, environment: opts.env ?? null, ...more });
  if (!format) return await open({});
  const interrupt = onInterrupt();
  try {
    const signal = deps.signal
      ? AbortSignal.any([deps.signal, interrupt.signal])
      : interrupt.signal;
    return listeningUntilDisposed(
      await open({ onProgress: progressPrinter(format), signal }),
      interrupt,
    );
  } catch (error) {
    interrupt[Symbol.dispose]();
    throw error;
  }
}

/** The handle, whose disposal (the command's `await using`) also removes the listeners. */
function listeningUntilDisposed(project: SluiceProject, interrupt: Interrupt): SluiceProject {
  const dispose = project[Symbol.asyncDispose].bind(project);
  Object.defineProperty(project, Symbol.asyncDispose, {
    value: async () => {
      try {
        await dispose();
      } finally {
        interrupt[Symbol.dispose]();
      }
    },
  });
  return project;
}
