// test-needs: docker
/**
 * `sluice runtime build --check` on the real Docker daemon (the image is built by the
 * bootstrap): exit 0, and the envelope and text output the golden transcripts of
 * `cli/envelopes_test.ts` cannot pin on the fakes.
 * @module
 */
import assert from "node:assert/strict";
import { runCli } from "./main.ts";

async function capture(args: string[]): Promise<{ status: number; stdout: string }> {
  const out: string[] = [];
  const log = console.log;
  console.log = (...xs: unknown[]) => out.push(xs.map(String).join(" "));
  try {
    return { status: await runCli(args), stdout: out.join("\n") };
  } finally {
    console.log = log;
  }
}

Deno.test("runtime build --check prints the up-to-date runner image ID (text and -o json)", async () => {
  const json = await capture(["-o", "json", "runtime", "build", "--check"]);
  assert.equal(json.status, 0, json.stdout);
  const envelope = JSON.parse(json.stdout);
  assert.match(envelope.data.image, /^sha256:[0-9a-f]{64}$/);
  assert.deepEqual(envelope, {
    ok: true,
    command: "runtime build",
    data: { image: envelope.data.image, checkedOnly: true },
    errors: [],
  });
  const text = await capture(["runtime", "build", "--check"]);
  assert.equal(text.status, 0);
  assert.equal(text.stdout, envelope.data.image);
});
