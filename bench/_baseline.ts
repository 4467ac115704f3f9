/**
 * Builds (or finds) the benchmark baseline image: bench/baseline (a hand-written Kafka Streams
 * filter) compiled by Maven offline in a temporary copy, then `docker build` FROM the runner's
 * base image with the runner's JVM flags. An image labelled with the same inputs hash is reused.
 * @module
 */
import { dockerCli } from "../harness/docker.ts";
import { BASE_IMAGE } from "../harness/images.ts";
import { ROOT } from "./_common.ts";

async function run(cmd: string, args: string[], cwd?: string): Promise<string> {
  const out = await new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "piped" }).output();
  const dec = new TextDecoder();
  if (out.code !== 0) {
    throw new Error(`${cmd} ${args.join(" ")} → ${out.code}: ${dec.decode(out.stderr)}`);
  }
  return dec.decode(out.stdout).trim();
}

async function files(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(`${dir}/${prefix}`)) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory) {
      if (e.name !== "target") out.push(...await files(dir, rel));
    } else out.push(rel);
  }
  return out.sort();
}

/** The baseline image ID (`sha256:…`), built when missing. */
export async function baselineImage(): Promise<string> {
  const src = `${ROOT}bench/baseline`;
  const baseId = await run(dockerCli(), ["image", "inspect", "--format", "{{.Id}}", BASE_IMAGE]);
  const h = new Uint8Array(
    await crypto.subtle.digest(
      "SHA-256",
      new TextEncoder().encode(
        JSON.stringify([
          baseId,
          ...await Promise.all(
            (await files(src)).map(async (f) => [f, await Deno.readTextFile(`${src}/${f}`)]),
          ),
        ]),
      ),
    ),
  );
  const inputs = [...h].map((b) => b.toString(16).padStart(2, "0")).join("");
  const existing = await run(dockerCli(), [
    "image",
    "ls",
    "-q",
    "--no-trunc",
    "--filter",
    "label=sluice.image=bench-baseline",
    "--filter",
    `label=sluice.inputs=${inputs}`,
  ]);
  if (existing) return existing.split("\n")[0];
  const tmp = await Deno.makeTempDir({ prefix: "sluice-bench-baseline-" });
  try {
    for (const f of await files(src)) {
      const to = `${tmp}/src/${f}`;
      await Deno.mkdir(to.replace(/\/[^/]+$/, ""), { recursive: true });
      await Deno.copyFile(`${src}/${f}`, to);
    }
    await run("mvn", [
      "-o",
      "-B",
      "-q",
      "-Dstyle.color=never",
      "-f",
      `${tmp}/src/pom.xml`,
      "package",
    ]);
    await Deno.mkdir(`${tmp}/ctx`);
    await Deno.copyFile(`${src}/Dockerfile`, `${tmp}/ctx/Dockerfile`);
    await run("cp", ["-r", `${tmp}/src/target/lib`, `${tmp}/ctx/lib`]);
    await Deno.copyFile(
      `${tmp}/src/target/sluice-bench-baseline.jar`,
      `${tmp}/ctx/lib/sluice-bench-baseline.jar`,
    );
    const out = await new Deno.Command(dockerCli(), {
      args: [
        "build",
        "-q",
        "--build-arg",
        `BASE=${BASE_IMAGE}`,
        "--label",
        "sluice.image=bench-baseline",
        "--label",
        `sluice.inputs=${inputs}`,
        "-t",
        `sluice/bench-baseline:${inputs.slice(0, 12)}`,
        `${tmp}/ctx`,
      ],
      env: { DOCKER_BUILDKIT: "0" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const id = new TextDecoder().decode(out.stdout).trim();
    if (out.code !== 0 || !id.startsWith("sha256:")) {
      throw new Error(
        `docker build of the baseline failed: ${new TextDecoder().decode(out.stderr)}`,
      );
    }
    return id;
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
}
