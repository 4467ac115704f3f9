/**
 * Rendering of command results: human text, or the `-o json` envelope
 * `{ ok, command, data, errors }` printed as one JSON document on stdout; the output format
 * chosen on the command line ({@link outputFormat}); and progress events as timed lines.
 * Everything printed passes through `redactText` last (connection-string credentials, secret
 * `KEY=value`), a backstop behind the redaction each result already carries.
 * @module
 */
import type { Command } from "npm:commander@15.1.0";
import { exitCodeFor, progressLabel, redactText, SluiceError } from "../mod.ts";
import type { ProgressEvent, ProgressListener } from "../mod.ts";

/** Output format chosen with `-o`. */
export type OutputFormat = "text" | "json";

/** The JSON envelope every command prints under `-o json`. */
export interface Envelope {
  ok: boolean;
  command: string;
  data: unknown;
  errors: Array<Record<string, unknown>>;
}

/** The output format chosen on the command line (global `-o`). */
export function outputFormat(cmd: Command): OutputFormat {
  let root: Command = cmd;
  while (root.parent) root = root.parent;
  return root.opts().output === "json" ? "json" : "text";
}

/** Print a successful result. `text` renders the human form. */
export function printResult(
  format: OutputFormat,
  command: string,
  data: unknown,
  text: (data: unknown) => string,
): void {
  if (format === "json") {
    const env: Envelope = { ok: true, command, data, errors: [] };
    console.log(redactText(JSON.stringify(env, null, 2)));
  } else {
    const out = text(data);
    if (out.length > 0) console.log(redactText(out));
  }
}

/**
 * A command that failed with a result to show beside its error (a blocked plan and its review):
 * the envelope's `data` holds the result, `errors` the failure.
 */
export class FailureWithResult extends Error {
  constructor(readonly failure: SluiceError, readonly data: unknown) {
    super(failure.message);
  }
}

/** Print a failure and return the documented exit status for it. */
export function printFailure(format: OutputFormat, command: string, thrown: unknown): number {
  const data = thrown instanceof FailureWithResult ? thrown.data : null;
  const error = thrown instanceof FailureWithResult ? thrown.failure : thrown;
  const err = error instanceof SluiceError
    ? error.toJSON()
    : { code: "INTERNAL", message: error instanceof Error ? error.message : String(error) };
  if (format === "json") {
    const env: Envelope = { ok: false, command, data, errors: [err] };
    console.log(redactText(JSON.stringify(env, null, 2)));
  } else {
    console.error(redactText(`error[${err.code}]: ${err.message}`));
  }
  return exitCodeFor(error);
}

/** Waits are shown once every this many milliseconds of waiting (they arrive once per poll). */
const WAIT_LINE_EVERY_MS = 5_000;

/**
 * A progress listener that prints one line per event on a terminal (text output), or none
 * under `-o json` (the envelope is the only output there): the seconds since the run's first
 * event on the journey's clock (the event's `at`), the event's label (`progressLabel`: a
 * boundary, an action, `interrupted CANCELLED`, ...) and its message — the same events the SDK's
 * `onProgress` receives (docs/events.md). A wait is shown once every five seconds of waiting.
 */
export function progressPrinter(format: OutputFormat): ProgressListener | undefined {
  if (format === "json") return undefined;
  // each run (an operation's events, numbered from 1) is timed from its own first event
  let t0 = 0;
  let shownWait = 0;
  return (e: ProgressEvent) => {
    if (e.seq === 1) t0 = Date.parse(e.at);
    let message = e.message;
    if (e.kind === "wait") {
      const step = Math.floor(e.waited_ms / WAIT_LINE_EVERY_MS);
      if (step <= shownWait) return;
      shownWait = step;
      message = `${e.message} (${Math.round(e.waited_ms / 1000)} s of at most ${
        Math.round(e.bound_ms / 1000)
      } s)`;
    } else {
      shownWait = 0;
    }
    const elapsed = ((Date.parse(e.at) - t0) / 1000).toFixed(1).padStart(5);
    console.log(redactText(`  ${elapsed}s  ${progressLabel(e).padEnd(20)} ${message}`));
  };
}
