import assert from "node:assert/strict";
import { SluiceError } from "../errors.ts";
import { parseSince } from "./logs.ts";

const NOW = Date.parse("2026-12-01T12:00:00Z");

Deno.test("--since takes a duration before now or an RFC 3339 time, and nothing else", () => {
  assert.equal(parseSince("90s", NOW), "2026-12-01T11:58:30.000Z");
  assert.equal(parseSince("10m", NOW), "2026-12-01T11:50:00.000Z");
  assert.equal(parseSince("2h", NOW), "2026-12-01T10:00:00.000Z");
  assert.equal(parseSince("1d", NOW), "2026-11-30T12:00:00.000Z");
  assert.equal(parseSince("2026-12-01T11:00:00+01:00", NOW), "2026-12-01T10:00:00.000Z");
  for (const bad of ["yesterday", "10", "-5m", "2026-12-01", ""]) {
    assert.throws(
      () => parseSince(bad, NOW),
      (e: unknown) => e instanceof SluiceError && e.code === "USAGE_SINCE",
      bad,
    );
  }
});
