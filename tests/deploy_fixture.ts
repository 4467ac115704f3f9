/**
 * Helpers of the deployment integration tests: run the real `bin/sluice` launcher, compute
 * the starter's exact expected output, read the runner's output, and remove what a
 * CLI-driven apply created (its containers and volume carry the application-ID label, not
 * the test run's label).
 * @module
 */
import assert from "node:assert/strict";
import { removeLabelled } from "../harness/docker.ts";
import { readAll } from "../harness/kafka.ts";

const ROOT = new URL("..", import.meta.url).pathname;

/** What one `bin/sluice` invocation returned. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run `bin/sluice ARGS` with extra environment variables. */
export async function sluice(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const out = await new Deno.Command(`${ROOT}bin/sluice`, {
    args,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** The `-o json` envelope. */
export interface Envelope {
  ok: boolean;
  command: string;
  data: Record<string, unknown> | null;
  errors: Array<{ code: string; message: string; evidence?: Record<string, unknown> }>;
}

/** Run `bin/sluice -o json ARGS` and parse its one JSON document. */
export async function sluiceJson(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; envelope: Envelope; stderr: string }> {
  const r = await sluice(["-o", "json", ...args], env);
  let envelope: Envelope;
  try {
    envelope = JSON.parse(r.stdout);
  } catch {
    assert.fail(`sluice ${args.join(" ")}: stdout is not JSON:\n${r.stdout}\n${r.stderr}`);
  }
  return { code: r.code, envelope, stderr: r.stderr };
}

/** Assert a CLI run exited with `code`, showing its output when it did not. */
export function assertExit(run: CliRun | { code: number; stderr: string }, code: number) {
  const out = "stdout" in run ? run.stdout : "";
  assert.equal(run.code, code, `exit ${run.code} (expected ${code})\n${out}\n${run.stderr}`);
}

/** A sample record of the starter. */
export interface Sample {
  key: string;
  value: Record<string, unknown>;
}

/** The starter's sample records. */
export async function samplesOf(dir: string): Promise<Sample[]> {
  const text = await Deno.readTextFile(`${dir}/samples/raw_orders.jsonl`);
  return text.trim().split("\n").map((l) => JSON.parse(l) as Sample);
}

/**
 * The exact output the starter's model gives for `samples`: `amount >= 100 AND paid = TRUE`,
 * projected to order_id, amount, paid, keys unchanged; sorted by key.
 */
export function expectedStarterOutput(samples: Sample[]): Array<{ key: string; value: unknown }> {
  return samples
    .filter((s) => (s.value.amount as number) >= 100 && s.value.paid === true)
    .map((s) => ({
      key: s.key,
      value: { order_id: s.value.order_id, amount: s.value.amount, paid: s.value.paid },
    }))
    .sort(byKey);
}

function byKey(a: { key: string | null }, b: { key: string | null }): number {
  return (a.key ?? "").localeCompare(b.key ?? "");
}

/**
 * Read `topic` until it holds `count` records (bounded by attempts, not by a clock
 * assertion), sorted by key, values parsed as JSON.
 */
export async function outputRecords(
  bootstrap: string,
  topic: string,
  count: number,
  partitions = [0, 1, 2],
): Promise<Array<{ key: string | null; value: unknown }>> {
  let got: Array<{ key: string | null; value: unknown }> = [];
  for (let i = 0; i < 200 && got.length < count; i++) {
    got = (await readAll(bootstrap, topic, { partitions }))
      .map((r) => ({ key: r.key, value: JSON.parse(r.value!) }));
    if (got.length < count) await new Promise((r) => setTimeout(r, 300));
  }
  return got.sort(byKey);
}

/** The application ID of the starter's model for project `name` (no environment). */
export function starterApplicationId(name: string): string {
  return `sluice-${name}-eligible_orders`;
}

/** Remove the containers and volume a CLI-driven apply created for `applicationId`. */
export async function removeApplication(applicationId: string): Promise<void> {
  await removeLabelled("sluice.application-id", applicationId);
}
