import assert from "node:assert/strict";
import { SLUICE_VERSION } from "../lib/version.ts";

const launcher = new URL("../bin/sluice", import.meta.url).pathname;

async function sluice(...args: string[]) {
  const out = await new Deno.Command(launcher, { args, stdout: "piped", stderr: "piped" }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("the launcher prints the version and exits 0", async () => {
  const r = await sluice("--version");
  assert.equal(r.code, 0);
  assert.equal(r.stdout.trim(), SLUICE_VERSION);
});

Deno.test("--help lists the -o option and exits 0", async () => {
  const r = await sluice("--help");
  assert.equal(r.code, 0);
  assert.match(r.stdout, /-o, --output <format>/);
});

Deno.test("an unknown command is a usage error with exit status 2", async () => {
  const r = await sluice("no-such-command");
  assert.equal(r.code, 2);
  assert.match(r.stderr, /no-such-command|unknown command|too many arguments/);
});

Deno.test("an unknown command with --help or -h is still a usage error (exit 2), at any level", async () => {
  for (
    const args of [
      ["nonexistent", "--help"],
      ["--help", "nonexistent"],
      ["-o", "json", "nonexistent", "-h"],
      ["state", "nonexistent", "--help"],
    ]
  ) {
    const r = await sluice(...args);
    assert.equal(r.code, 2, args.join(" "));
    assert.equal(r.stdout, "", args.join(" "));
    assert.match(r.stderr, /error: unknown command 'nonexistent'/, args.join(" "));
  }
  // help of a known command, a group or a command's argument is still help
  for (const args of [["state", "--help"], ["state", "show", "-h"], ["init", "--help", "dir"]]) {
    const r = await sluice(...args);
    assert.equal(r.code, 0, args.join(" "));
    assert.match(r.stdout, /^Usage: sluice /, args.join(" "));
  }
});

Deno.test("-o accepts only text or json", async () => {
  const r = await sluice("-o", "yaml", "--version");
  assert.equal(r.code, 2);
  assert.match(r.stderr, /Allowed choices are text, json/);
});

Deno.test("a failure under -o json is one envelope naming the command, with a stable code", async () => {
  const r = await sluice("-o", "json", "validate", "--project", "/nonexistent-sluice-project");
  assert.equal(r.code, 3);
  const env = JSON.parse(r.stdout);
  assert.equal(env.ok, false);
  assert.equal(env.command, "validate");
  assert.equal(env.data, null);
  assert.equal(env.errors[0].code, "PROJECT_NOT_FOUND");
});
