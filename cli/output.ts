/**
 * Rendering of command results: human text, or the `-o json` envelope
 * `{ ok, command, data, errors }` printed as one JSON document on stdout. Everything printed
 * passes through `redactText` last (connection-string credentials, secret `KEY=value`), a
 * backstop behind the redaction each result already carries.
 * @module
 */
import { exitCodeFor, SluiceError } from "../lib/errors.ts";
import { redactText } from "../lib/artifact/redact.ts";

/** Output format chosen with `-o`. */
export type OutputFormat = "text" | "json";

/** The JSON envelope every command prints under `-o json`. */
export interface Envelope {
  ok: boolean;
  command: string;
  data: unknown;
  errors: Array<Record<string, unknown>>;
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

/** Print a failure and return the documented exit status for it. */
export function printFailure(format: OutputFormat, command: string, error: unknown): number {
  const err = error instanceof SluiceError
    ? error.toJSON()
    : { code: "INTERNAL", message: error instanceof Error ? error.message : String(error) };
  if (format === "json") {
    const env: Envelope = { ok: false, command, data: null, errors: [err] };
    console.log(redactText(JSON.stringify(env, null, 2)));
  } else {
    console.error(redactText(`error[${err.code}]: ${err.message}`));
  }
  return exitCodeFor(error);
}

/**
 * A progress callback that prints one timed line per step on a terminal (text output), or
 * nothing under `-o json` (the envelope is the only output there).
 */
export function progressPrinter(
  format: OutputFormat,
): ((step: string, detail: string) => void) | undefined {
  if (format === "json") return undefined;
  const t0 = Date.now();
  return (step: string, detail: string) => {
    console.log(
      redactText(
        `  ${((Date.now() - t0) / 1000).toFixed(1).padStart(5)}s  ${step.padEnd(20)} ${detail}`,
      ),
    );
  };
}
