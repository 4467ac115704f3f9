/**
 * Delivery of OpenLineage events to the `--openlineage URL|FILE` target.
 *
 * Delivery never decides an operation's outcome: {@link emit} never throws, and a failed
 * delivery comes back as a warning for the caller to report next to the (already decided)
 * result. An `http://` or `https://` target receives one POST of the event JSON per event
 * (5 s timeout, any 2xx accepted); any other target is a file (or a `file://` URL) that gets
 * one JSON line appended per event (opened for append, the whole line written, then fsync).
 *
 * @example
 * ```ts
 * const sink = lineageSink("lineage.jsonl"); // or "http://127.0.0.1:5000/api/v1/lineage"
 * const r = await emitRunEvent(sink, "START", ctx);
 * if (r.warning) console.error(`warning: ${r.warning}`);
 * ```
 * @module
 */
import { buildRunEvent } from "../../lineage/events.ts";
import type { LineageContext, LineageEventType, RunEventOptions } from "../../lineage/events.ts";

/** Default HTTP delivery timeout. */
export const DEFAULT_HTTP_TIMEOUT_MS = 5_000;

/** Where events go. */
export type LineageSink =
  | { kind: "http"; url: string; timeoutMs: number }
  | { kind: "file"; path: string };

/** The outcome of delivering one event. */
export interface EmitResult {
  delivered: boolean;
  /** Why delivery failed (null when delivered). Report it; never let it change the outcome. */
  warning: string | null;
}

/** Options of {@link lineageSink}. */
export interface SinkOptions {
  /** HTTP timeout in milliseconds (default 5000). */
  timeoutMs?: number;
}

/** Parse an `--openlineage` target: `http(s)://…` is an HTTP endpoint, anything else a file. */
export function lineageSink(target: string, options: SinkOptions = {}): LineageSink {
  if (/^https?:\/\//i.test(target)) {
    return { kind: "http", url: target, timeoutMs: options.timeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS };
  }
  if (/^file:\/\//i.test(target)) {
    return { kind: "file", path: decodeURIComponent(new URL(target).pathname) };
  }
  if (target.trim() === "") throw new Error("lineage: empty --openlineage target");
  return { kind: "file", path: target };
}

/** A short description of the sink, for warnings and logs. */
export function describeSink(sink: LineageSink): string {
  return sink.kind === "http" ? `POST ${sink.url}` : `file ${sink.path}`;
}

function message(e: unknown): string {
  if (e instanceof DOMException && (e.name === "TimeoutError" || e.name === "AbortError")) {
    return "timed out";
  }
  return e instanceof Error ? e.message : String(e);
}

async function postJson(sink: Extract<LineageSink, { kind: "http" }>, body: string) {
  const res = await fetch(sink.url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
    signal: AbortSignal.timeout(sink.timeoutMs),
  });
  // Always consume the body so the connection is released.
  const text = await res.text().catch(() => "");
  if (!res.ok) {
    throw new Error(`HTTP ${res.status}${text ? `: ${text.slice(0, 200)}` : ""}`);
  }
}

async function appendLine(path: string, line: string) {
  const bytes = new TextEncoder().encode(line);
  const file = await Deno.open(path, { append: true, create: true, write: true });
  try {
    let off = 0;
    while (off < bytes.length) off += await file.write(bytes.subarray(off));
    await file.sync();
  } finally {
    file.close();
  }
}

/** Deliver one event. Never throws: a failure is returned as a warning. */
export async function emit(sink: LineageSink, event: unknown): Promise<EmitResult> {
  try {
    const json = JSON.stringify(event);
    if (sink.kind === "http") await postJson(sink, json);
    else await appendLine(sink.path, `${json}\n`);
    return { delivered: true, warning: null };
  } catch (e) {
    return {
      delivered: false,
      warning: `OpenLineage event not delivered (${describeSink(sink)}): ${message(e)}`,
    };
  }
}

/**
 * Build and deliver one RunEvent of the operation. Never throws (a build error, e.g. an empty
 * bootstrap list, is returned as a warning too).
 */
export async function emitRunEvent(
  sink: LineageSink,
  eventType: LineageEventType,
  ctx: LineageContext,
  options: RunEventOptions = {},
): Promise<EmitResult> {
  let event;
  try {
    event = buildRunEvent(eventType, ctx, options);
  } catch (e) {
    return {
      delivered: false,
      warning: `OpenLineage ${eventType} event not built: ${message(e)}`,
    };
  }
  return await emit(sink, event);
}
