import assert from "node:assert/strict";
import { parseSecretRefs, substituteSecretRefs } from "./secret_ref.ts";

Deno.test("references are found with their offsets, literal text around them kept", () => {
  const v = "jdbc://h/db?user=${env:DB_USER}&password=${env:DB_PW}";
  const { refs, problem } = parseSecretRefs(v);
  assert.equal(problem, null);
  assert.deepEqual(refs.map((r) => [r.variable, v.slice(r.start, r.end)]), [
    ["DB_USER", "${env:DB_USER}"],
    ["DB_PW", "${env:DB_PW}"],
  ]);
  assert.deepEqual(parseSecretRefs("plain $dollar {brace}"), { refs: [], problem: null });
});

Deno.test("malformed references say why and where", () => {
  const cases: Array<[string, string, number]> = [
    ["a${env:X", "unterminated", 1],
    ["${file:/etc/x:k}", "only ${env:NAME} references are supported", 0],
    ["x${env:1X}", "'1X' is not an environment variable name", 1],
    ["${env:}", "'' is not an environment variable name", 0],
    ["${env:OK}${env:a-b}", "'a-b'", 9],
  ];
  for (const [value, fragment, start] of cases) {
    const { problem } = parseSecretRefs(value);
    assert.ok(problem?.message.includes(fragment), `${value}: ${problem?.message}`);
    assert.equal(problem?.start, start, value);
  }
});

Deno.test("substitution resolves every reference and reports the unset ones", () => {
  const lookup = (v: string) => ({ A: "1", B: "${env:A}" } as Record<string, string>)[v];
  assert.deepEqual(substituteSecretRefs("x${env:A}y${env:B}z", lookup), {
    value: "x1y${env:A}z", // a value is never re-scanned for references
    unset: [],
  });
  assert.deepEqual(substituteSecretRefs("${env:C}-${env:A}", lookup), {
    value: "-1",
    unset: ["C"],
  });
});
