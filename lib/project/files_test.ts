// A project's inputs planted as a hostile pull request would plant them: links out of the
// project, hard links, `..` and absolute paths, a FIFO, an endless device, an oversized file.
// Each is refused with its code, without blocking, and nothing of its target is read or printed.
import assert from "node:assert/strict";
import { join } from "node:path";
import { SluiceError } from "../errors.ts";
import { diskFiles } from "./files.ts";
import { readProject } from "./load.ts";
import { tempStarter } from "./_test_project.ts";

const SECRET = "aws_access_key_id AKIAIOSFODNN7EXAMPLE";
const MODEL = "models/eligible_orders.sql";

async function refused(p: Promise<unknown>, code: string): Promise<SluiceError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof SluiceError, String(e));
    assert.equal(e.code, code, e.message);
    assert.ok(!e.message.includes("AKIA"), e.message);
    return e;
  }
  throw new Error(`expected ${code}`);
}

/** A project whose model file is replaced by what `plant` makes at its path. */
async function planted(plant: (path: string, outside: string) => Promise<void>) {
  const dir = await tempStarter();
  const outside = await Deno.makeTempDir({ prefix: "sluice-outside-" });
  await Deno.writeTextFile(join(outside, "credentials"), `${SECRET}\n`);
  await Deno.remove(join(dir, MODEL));
  await plant(join(dir, MODEL), outside);
  return {
    dir,
    async [Symbol.asyncDispose]() {
      await Deno.remove(dir, { recursive: true });
      await Deno.remove(outside, { recursive: true });
    },
  };
}

Deno.test("a regular file inside the project is read; a missing one or a directory is absent", async () => {
  const dir = await tempStarter();
  try {
    const files = diskFiles(dir);
    assert.match((await files.read(MODEL))!, /SELECT/);
    assert.equal(await files.read("models/none.sql"), null);
    assert.equal(await files.read("models"), null);
    assert.equal(await files.read("sluice.yaml/x"), null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a symbolic link among the inputs is refused without reading its target, in the loader's errors too", async () => {
  await using p = await planted((at, outside) => Deno.symlink(join(outside, "credentials"), at));
  await refused(diskFiles(p.dir).read(MODEL), "PROJECT_SYMLINK_INPUT");
  const { project, errors } = await readProject(p.dir);
  assert.equal(project, null);
  assert.deepEqual(errors.map((e) => e.code), ["PROJECT_SYMLINK_INPUT"]);
  assert.ok(!JSON.stringify(errors.map((e) => [e.message, e.evidence])).includes("AKIA"));
});

Deno.test("a symbolic link to an endless device is refused at once", async () => {
  await using p = await planted((at) => Deno.symlink("/dev/zero", at));
  await refused(diskFiles(p.dir).read(MODEL), "PROJECT_SYMLINK_INPUT");
});

Deno.test("a directory on the way that is a link is refused, naming it", async () => {
  const dir = await tempStarter();
  const outside = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(outside, "models"));
    await Deno.writeTextFile(join(outside, "models", "eligible_orders.sql"), SECRET);
    await Deno.remove(join(dir, "models"), { recursive: true });
    await Deno.symlink(join(outside, "models"), join(dir, "models"));
    const e = await refused(diskFiles(dir).read(MODEL), "PROJECT_SYMLINK_INPUT");
    assert.match(e.message, /models is a symbolic link/);
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("the manifest itself as a link is refused; the project directory may be one", async () => {
  const dir = await tempStarter();
  const link = `${dir}-link`;
  try {
    await Deno.symlink(dir, link);
    assert.ok((await readProject(link)).project, "a linked project directory loads");
    const outside = await Deno.makeTempFile();
    await Deno.rename(join(dir, "sluice.yaml"), outside);
    await Deno.symlink(outside, join(dir, "sluice.yaml"));
    const { errors } = await readProject(dir);
    assert.deepEqual(errors.map((e) => e.code), ["PROJECT_SYMLINK_INPUT"]);
    await Deno.remove(outside);
  } finally {
    await Deno.remove(link).catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a hard link is refused: its other name may be outside the project", async () => {
  await using p = await planted((at, outside) => Deno.link(join(outside, "credentials"), at));
  await refused(diskFiles(p.dir).read(MODEL), "PROJECT_HARDLINK_INPUT");
});

Deno.test("a FIFO is refused without blocking", async () => {
  await using p = await planted(async (at) => {
    const r = await new Deno.Command("mkfifo", { args: [at] }).output();
    assert.equal(r.code, 0);
  });
  // a reader that opened the FIFO would wait here forever for a writer
  await refused(diskFiles(p.dir).read(MODEL), "PROJECT_INPUT_NOT_REGULAR");
});

Deno.test("an oversized input is refused with the bound, before it is read", async () => {
  await using p = await planted((at) => Deno.writeTextFile(at, "-- x\n".repeat(300)));
  const e = await refused(
    diskFiles(p.dir, { maxBytes: 1000 }).read(MODEL),
    "PROJECT_INPUT_TOO_LARGE",
  );
  assert.match(e.message, /1500 bytes, over the 1000-byte bound/);
  assert.ok(await diskFiles(p.dir, { maxBytes: 1500 }).read(MODEL));
});

Deno.test("a path that leaves the project is refused: '..' and absolute paths", async () => {
  const dir = await tempStarter();
  try {
    const files = diskFiles(dir);
    for (const path of ["../etc/passwd", "models/../../x", "/etc/passwd", ""]) {
      await refused(files.read(path), "PROJECT_INPUT_OUTSIDE");
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an input that is not UTF-8 text is invalid", async () => {
  await using p = await planted((at) => Deno.writeFile(at, new Uint8Array([0xff, 0xfe, 0x41])));
  await refused(diskFiles(p.dir).read(MODEL), "PROJECT_INVALID");
});
