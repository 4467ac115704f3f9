// The README's SDK section shows examples/replace_predicate.ts: the block must be the file's code
// (everything from its first import), so the README cannot show a script that no longer runs.
import assert from "node:assert/strict";

Deno.test("the README's SDK example is examples/replace_predicate.ts, verbatim", async () => {
  const root = new URL("..", import.meta.url);
  const example = await Deno.readTextFile(new URL("examples/replace_predicate.ts", root));
  const readme = await Deno.readTextFile(new URL("README.md", root));
  const code = example.slice(example.indexOf("import {")).trimEnd();
  const section = readme.slice(readme.indexOf("## The SDK"));
  const block = /```ts\n([\s\S]*?)\n```/.exec(section)?.[1];
  assert.ok(code.length > 200, "the example's code was not found");
  assert.equal(block, code);
});
