import assert from "node:assert/strict";
import { declaredNeeds, parseModule } from "./test_files.ts";

Deno.test("a module's declarations and its relative value imports are read; type imports are not followed", () => {
  const m = parseModule(
    "/p/t_test.ts",
    [
      "// test-needs: env, postgres",
      "// test-exclusive: restarts the broker",
      'import assert from "node:assert/strict";',
      'import { a } from "./fixture.ts";',
      'import type { B } from "../b.ts";',
      'export { c } from "./c.ts";',
      "import {",
      "  d,",
      '} from "../d/d.ts";',
    ].join("\n"),
  );
  assert.deepEqual(m.needs, ["env", "postgres"]);
  assert.deepEqual(m.lines, ["/p/t_test.ts:1", "/p/t_test.ts:1"]);
  assert.equal(m.exclusive, "restarts the broker");
  assert.deepEqual(m.imports, ["/p/fixture.ts", "/p/c.ts", "/d/d.ts"]);
});

Deno.test("an unknown need is an error naming its line", () => {
  assert.throws(
    () => parseModule("/p/x_test.ts", "\n// test-needs: kafka"),
    /\/p\/x_test\.ts:2: unknown test need 'kafka'/,
  );
});

Deno.test("a need declared by an imported fixture is the test file's; exclusive is the file's own", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/pg.ts`, "// test-needs: postgres\n// test-exclusive: no\n");
    await Deno.writeTextFile(`${dir}/fixture.ts`, 'import { x } from "./pg.ts";\n');
    await Deno.writeTextFile(`${dir}/a_test.ts`, 'import { y } from "./fixture.ts";\n');
    await Deno.writeTextFile(`${dir}/b_test.ts`, 'import type { y } from "./fixture.ts";\n');
    const a = await declaredNeeds(`${dir}/a_test.ts`);
    assert.deepEqual([...a.needs], ["postgres"]);
    assert.equal(a.exclusive, null);
    assert.deepEqual(a.sources, [`${dir}/pg.ts:1`]);
    assert.equal((await declaredNeeds(`${dir}/b_test.ts`)).needs.size, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
