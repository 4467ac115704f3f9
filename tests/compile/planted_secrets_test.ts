/**
 * Secrets planted where they do not belong — a project a pull request may have written — never
 * reach what sluice prints: each scenario writes a distinct value into one key or place of the
 * starter, runs `validate`, `compile` and `plan --offline` through bin/sluice in text and JSON,
 * and searches stdout and stderr for the value. JSON output must still parse. Each scenario also
 * names the error it must produce, so a scenario that stops reaching its diagnostic fails here
 * instead of passing vacuously.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const SLUICE = fileURLToPath(new URL("../../bin/sluice", import.meta.url));

async function sluice(cwd: string, args: string[]) {
  const out = await new Deno.Command(SLUICE, { args, cwd, stdout: "piped", stderr: "piped" })
    .output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

interface Scenario {
  name: string;
  /** The manifest, from the starter's. */
  manifest?: (m: string) => string;
  /** The model's SQL. */
  sql?: string;
  /** The error `validate` reports (null: the project is valid). */
  code: string | null;
}

const SECRET_COLUMN = [
  "      - { name: customer, type: STRING, nullable: true }",
  "      - { name: customer, type: STRING, nullable: true }\n" +
  "      - { name: api_token, type: STRING, nullable: true }",
] as const;
const SELECT = "SELECT order_id, amount, paid\nFROM raw_orders\n";

/** Scenarios; `SECRET` in them is replaced by a value unique to the scenario. */
const SCENARIOS: Scenario[] = [
  {
    name: "an unknown secret-looking key",
    manifest: (m) => m.replace("  bootstrap_internal: kafka:9092", "$&\n  sasl_password: SECRET"),
    code: "MANIFEST_UNKNOWN_KEY",
  },
  {
    name: "the same, quoted",
    manifest: (m) => m.replace("  bootstrap_internal: kafka:9092", `$&\n  sasl_password: "SECRET"`),
    code: "MANIFEST_UNKNOWN_KEY",
  },
  {
    name: "a top-level token",
    manifest: (m) => m.replace("network: sluice-net", "$&\napi_token: SECRET"),
    code: "MANIFEST_UNKNOWN_KEY",
  },
  {
    name: "a secret in a flow mapping",
    manifest: (m) =>
      m.replace(
        /kafka:\n {2}# address[^\n]*\n {2}bootstrap_host: [^\n]*\n {2}# address[^\n]*\n {2}bootstrap_internal: [^\n]*/,
        `kafka: { bootstrap_host: "localhost:19092", bootstrap_internal: "kafka:9092", secret: SECRET }`,
      ),
    code: "MANIFEST_UNKNOWN_KEY",
  },
  {
    name: "user:password@ in bootstrap_host",
    manifest: (m) => m.replace("bootstrap_host: localhost:19092", "bootstrap_host: app:SECRET@h:1"),
    code: "MANIFEST_INVALID_VALUE",
  },
  {
    name: "a URL with userinfo in bootstrap_host",
    manifest: (m) =>
      m.replace("bootstrap_host: localhost:19092", `bootstrap_host: "kafka://app:SECRET@h:1"`),
    code: "MANIFEST_INVALID_VALUE",
  },
  {
    name: "a model's env map",
    manifest: (m) =>
      m.replace(
        "      topic: eligible_orders",
        "$&\n    env:\n      DB_URL: postgres://u:SECRET@db/x\n      PLAIN: SECRET",
      ),
    code: "MANIFEST_UNKNOWN_KEY",
  },
  {
    name: "a literal DSN in the state section",
    manifest: (m) => m.replace("  dir: .sluice/state", "$&\n  dsn: postgres://u:SECRET@db/x"),
    code: "MANIFEST_UNKNOWN_KEY",
  },
  {
    name: "a secret column compared with a literal (valid)",
    manifest: (m) => m.replace(...SECRET_COLUMN),
    sql: `${SELECT}WHERE amount >= 100 AND api_token = 'SECRET'\n`,
    code: null,
  },
  {
    name: "the literal first, then a syntax error",
    manifest: (m) => m.replace(...SECRET_COLUMN),
    sql: `${SELECT}WHERE 'SECRET' = api_token AND\n`,
    code: "SQL_SYNTAX",
  },
  {
    name: "LIKE on a secret column",
    manifest: (m) => m.replace(...SECRET_COLUMN),
    sql: `${SELECT}WHERE api_token <> 'SECRET' OR api_token LIKE 'SECRET%'\n`,
    code: "SQL_UNSUPPORTED",
  },
  {
    name: "IN over lines, then a type error",
    manifest: (m) => m.replace(...SECRET_COLUMN),
    sql: `${SELECT}WHERE api_token IN (\n  'SECRET',\n  'b') AND amount >= 'SECRET'\n`,
    code: "TYPE_MISMATCH",
  },
];

const COMMANDS = [["validate"], ["compile", "--out", "out"], ["plan", "--offline"]];

Deno.test("a secret planted in any key or literal of a project is never printed, in text or JSON", async () => {
  const root = await Deno.makeTempDir({ prefix: "sluice-planted-" });
  try {
    const init = await sluice(root, ["init", "p"]);
    assert.equal(init.code, 0, init.stderr);
    const dir = join(root, "p");
    const manifest = await Deno.readTextFile(join(dir, "sluice.yaml"));
    const model = await Deno.readTextFile(join(dir, "models/eligible_orders.sql"));
    for (const [i, s] of SCENARIOS.entries()) {
      const secret = `Pl4nted${i}x${crypto.randomUUID().slice(0, 8)}`;
      const written = (s.manifest ?? ((m: string) => m))(manifest).replaceAll("SECRET", secret);
      assert.ok(written.includes(secret) || s.sql, `${s.name}: the manifest edit did not apply`);
      await Deno.writeTextFile(join(dir, "sluice.yaml"), written);
      await Deno.writeTextFile(
        join(dir, "models/eligible_orders.sql"),
        (s.sql ?? model).replaceAll("SECRET", secret),
      );
      for (const args of COMMANDS) {
        for (const format of ["text", "json"]) {
          const r = await sluice(dir, ["-o", format, ...args]);
          const what = `${s.name}: sluice -o ${format} ${args.join(" ")} (exit ${r.code})`;
          assert.equal(r.stdout.includes(secret), false, `${what} printed it:\n${r.stdout}`);
          assert.equal(r.stderr.includes(secret), false, `${what} printed it:\n${r.stderr}`);
          if (format === "json") JSON.parse(r.stdout); // still one JSON document
          if (args[0] === "validate") {
            if (s.code === null) assert.equal(r.code, 0, `${what}\n${r.stdout}${r.stderr}`);
            else {
              assert.ok(
                r.stdout.includes(s.code) || r.stderr.includes(s.code),
                `${what}: no ${s.code}`,
              );
            }
          }
        }
      }
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
