/**
 * What a container wrote while it started, collected from its log stream as it arrives.
 * testcontainers removes a container that never became ready, so `docker logs` after the
 * failure finds nothing to read: the broker and the Connect worker keep their lines as they
 * arrive and print them with the failure.
 *
 * Three parts, each bounded, the most telling first, because a failure's text is often read
 * only from its start (a CI tracker keeps a part of the output):
 * - **milestones**: the first lines matching `notable` (e.g. "REST server listening",
 *   "Herder started", every WARN and ERROR), each cut to one screen line;
 * - **threads**: after a JVM thread dump (`docker kill --signal QUIT`: the JVM prints it to
 *   its standard output), the first frames of each thread whose name matches `threads`;
 * - **tail**: the last `keep` lines.
 *
 * @example
 * ```ts
 * import { logTail } from "./log_tail.ts";
 * const seen = logTail({ notable: /ERROR|WARN|started/ });
 * // container.withLogConsumer((stream) => seen.follow(stream))
 * console.log(seen.text("sluice-1234-kafka-1"));
 * ```
 * @module
 */
import type { Readable } from "node:stream";

/** What {@link logTail} keeps besides the last lines. */
export interface LogTailOptions {
  /** How many of the last lines to keep (default 40). */
  keep?: number;
  /** Lines worth naming apart from the tail (kept from the first, up to `notableKeep`). */
  notable?: RegExp;
  /** How many notable lines to keep (default 40). */
  notableKeep?: number;
  /** Thread names whose stacks a thread dump in the log should show (default none). */
  threads?: RegExp;
  /** How many frames of each such thread (default 12). */
  frames?: number;
}

/** The widest a kept line may be. */
const LINE_WIDTH = 300;
/** The most lines of a thread dump read (a worker's dump is a few hundred lines). */
const DUMP_LINES = 5_000;

function cut(line: string): string {
  return line.length > LINE_WIDTH ? `${line.slice(0, LINE_WIDTH)}…` : line;
}

/**
 * The named threads of a JVM thread dump (`"name" #id ... state` then `\tat frame` lines),
 * each with its state line and first `frames` frames.
 */
export function threadStacks(dump: string[], names: RegExp, frames = 12): string[] {
  const out: string[] = [];
  let take = 0;
  for (const line of dump) {
    const header = /^"([^"]*)"/.exec(line);
    if (header) {
      take = names.test(header[1]) ? frames + 1 : 0;
      if (take > 0) out.push(cut(line));
      continue;
    }
    if (take > 0 && line.trim() !== "") {
      out.push(cut(line));
      take--;
    }
  }
  return out;
}

/** A collector of one log stream's milestones, thread dump and last lines. */
export function logTail(options: LogTailOptions = {}): {
  follow(stream: Readable): void;
  text(name: string): string;
  /** Whether a thread dump has begun in the log. */
  dumped(): boolean;
} {
  const keep = options.keep ?? 40;
  const notableKeep = options.notableKeep ?? 40;
  const lines: string[] = [];
  const notable: string[] = [];
  let notableSeen = 0;
  let dump: string[] | null = null;
  let partial = "";
  const take = (line: string) => {
    // a thread dump is read apart: the tail stays the lines written before it
    if (dump !== null) {
      if (dump.length < DUMP_LINES) dump.push(line);
      return;
    }
    if (line.startsWith("Full thread dump")) {
      dump = [];
      return;
    }
    if (options.notable?.test(line)) {
      notableSeen++;
      if (notable.length < notableKeep) notable.push(cut(line));
    }
    lines.push(cut(line));
    if (lines.length > keep) lines.splice(0, lines.length - keep);
  };
  return {
    follow(stream: Readable) {
      stream.on("data", (chunk: string | Uint8Array) => {
        const text = partial +
          (typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk));
        const parts = text.split("\n");
        partial = parts.pop() ?? "";
        for (const part of parts) take(part);
      });
      // said in the tail even after a thread dump began
      stream.on("error", (e: unknown) => lines.push(`(log stream error: ${String(e)})`));
      stream.on("end", () => {
        if (partial) take(partial);
        partial = "";
        lines.push("(log stream ended)");
      });
    },
    dumped: () => dump !== null,
    text(name: string): string {
      const parts: string[] = [];
      if (options.notable) {
        const more = notableSeen > notable.length
          ? ` (the first ${notable.length} of ${notableSeen})`
          : "";
        parts.push(
          `milestones of ${name}${more}:\n${notable.join("\n") || "(none)"}`,
        );
      }
      if (options.threads && dump !== null) {
        const stacks = threadStacks(dump, options.threads, options.frames);
        parts.push(
          `threads of ${name} matching ${options.threads}:\n${
            stacks.join("\n") || "(none in the dump)"
          }`,
        );
      }
      const all = partial ? [...lines, partial] : lines;
      parts.push(`last log lines of ${name}:\n${all.join("\n") || "(none)"}`);
      return parts.join("\n");
    },
  };
}
