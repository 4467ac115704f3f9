/**
 * Private helpers for following a container's output through the logs API: Docker's
 * multiplexed stream framing (a container without a TTY: an 8-byte header per frame, stream
 * type then a big-endian length) split into stdout lines, and an RFC 3339 time as the
 * `since` parameter the daemon takes (seconds, with nanoseconds).
 * @module
 */

const HEADER = 8;
const STDOUT = 1;
const STDERR = 2;

/**
 * Feed it the bytes of a multiplexed log stream as they arrive; it returns the complete
 * stdout lines seen so far (without their newline), keeping a partial line or frame for the
 * next chunk.
 */
export function stdoutLines(): (chunk: Uint8Array) => string[] {
  const lines = logLines();
  return (chunk) => lines.feed(chunk).filter((l) => l.stream === "stdout").map((l) => l.line);
}

/**
 * An RFC 3339 time (nanoseconds kept) as the logs API's `since`: `<seconds>.<nanoseconds>`.
 * Docker's zero time (a container never started) is 0: every line.
 */
export function sinceParam(rfc3339: string): string {
  const m = /^(.*?)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(rfc3339);
  if (!m) throw new Error(`not an RFC 3339 time: ${rfc3339}`);
  const whole = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(whole)) throw new Error(`not an RFC 3339 time: ${rfc3339}`);
  const seconds = Math.floor(whole / 1000);
  if (seconds <= 0) return "0";
  return `${seconds}.${(m[2] ?? "").padEnd(9, "0").slice(0, 9)}`;
}

/**
 * For both streams ({@link stdoutLines} keeps stdout's): feed it the bytes of a multiplexed log stream; it
 * returns the complete lines seen so far with their stream. `end()` returns the partial lines
 * left when the stream ended.
 */
export function logLines(): {
  feed(chunk: Uint8Array): Array<{ stream: "stdout" | "stderr"; line: string }>;
  end(): Array<{ stream: "stdout" | "stderr"; line: string }>;
} {
  let pending = new Uint8Array(0);
  const partial = { stdout: "", stderr: "" };
  const decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };
  return {
    feed(chunk) {
      const buf = new Uint8Array(pending.length + chunk.length);
      buf.set(pending);
      buf.set(chunk, pending.length);
      const out: Array<{ stream: "stdout" | "stderr"; line: string }> = [];
      let off = 0;
      while (buf.length - off >= HEADER) {
        const size = new DataView(buf.buffer, buf.byteOffset + off + 4, 4).getUint32(0);
        if (buf.length - off - HEADER < size) break;
        const kind = buf[off];
        const payload = buf.subarray(off + HEADER, off + HEADER + size);
        off += HEADER + size;
        if (kind !== STDOUT && kind !== STDERR) continue;
        const stream = kind === STDOUT ? "stdout" : "stderr";
        const parts = (partial[stream] + decoders[stream].decode(payload, { stream: true }))
          .split("\n");
        partial[stream] = parts.pop() ?? "";
        for (const line of parts) out.push({ stream, line });
      }
      pending = buf.slice(off);
      return out;
    },
    end() {
      const out: Array<{ stream: "stdout" | "stderr"; line: string }> = [];
      for (const stream of ["stdout", "stderr"] as const) {
        if (partial[stream] !== "") out.push({ stream, line: partial[stream] });
        partial[stream] = "";
      }
      return out;
    },
  };
}
