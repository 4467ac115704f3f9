/**
 * The registered command groups. Each entry adds its subcommands to the program.
 * Add a new group by writing `cli/commands/<name>.ts` and listing its `register` here. A command
 * is one SDK call (a method of the project handle, or a `mod.ts` function) and a renderer: it
 * parses its flags, opens the project with `await using`, calls the SDK and prints the result
 * with `printResult` (or throws a `SluiceError`, which `runCli` prints with its exit status).
 * @module
 */
import type { Command } from "npm:commander@15.1.0";
import type { RuntimeDeps } from "../../mod.ts";
import { register as project } from "./project.ts";
import { register as state } from "./state.ts";
import { register as runtime } from "./runtime.ts";
import { register as deploy } from "./deploy.ts";
import { register as replacement } from "./replacement.ts";
import { register as review } from "./review.ts";
import { register as version } from "./version.ts";
import { register as operator } from "./operator.ts";
import { register as logs } from "./logs.ts";
import { register as dayTwo } from "./day_two.ts";
import { register as acknowledgeDrift } from "./acknowledge_drift.ts";

/**
 * A function that adds one command group to the program; `deps` (ports, clock, UUID source) are
 * passed to every SDK journey its commands call.
 */
export type Register = (program: Command, deps: RuntimeDeps) => void;

/** Every command group, in the order `--help` lists them. */
export const COMMANDS: Register[] = [
  project,
  deploy,
  review,
  state,
  replacement,
  operator,
  logs,
  dayTwo,
  acknowledgeDrift,
  runtime,
  version,
];
