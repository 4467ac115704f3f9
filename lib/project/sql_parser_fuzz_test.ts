/**
 * Fuzzing the SQL front end: random token soups and mutations of valid models. Every input
 * must either parse and type-check or fail with a SluiceError; nothing else may escape and
 * nothing may hang (the whole run is bounded in time).
 */
import { ok } from "node:assert/strict";
import { SluiceError } from "../errors.ts";
import { SourceFile } from "../expr/diagnostic.ts";
import type { SchemaField } from "../expr/schema.ts";
import { checkModelSql } from "./model.ts";
import { seeded } from "../../testing/seeded.ts";

const SEED = 20261129;
const schema: SchemaField[] = [
  { name: "order_id", type: "STRING", nullable: false },
  { name: "amount", type: "BIGINT", nullable: false },
  { name: "paid", type: "BOOLEAN", nullable: false },
  { name: "score", type: "DOUBLE", nullable: true },
];
const sources = new Map([["raw_orders", schema]]);

const SEEDS = [
  "SELECT order_id, amount AS total FROM raw_orders WHERE amount >= 100 AND paid = TRUE",
  "SELECT order_id FROM raw_orders WHERE score BETWEEN 0.5 AND 1e3 OR order_id IN ('a', 'b''c')",
  "select paid from raw_orders where not (amount < -5 or score is not null);",
  "SELECT amount FROM raw_orders -- c\nWHERE order_id NOT IN ('x', NULL) /* d */",
];
const TOKENS = [
  "SELECT",
  "FROM",
  "WHERE",
  "AND",
  "OR",
  "NOT",
  "IS",
  "NULL",
  "IN",
  "BETWEEN",
  "TRUE",
  "FALSE",
  "AS",
  "JOIN",
  "GROUP",
  "BY",
  "COUNT",
  "(",
  ")",
  ",",
  ";",
  "*",
  "+",
  "-",
  "=",
  "<>",
  "!=",
  "<",
  "<=",
  ">",
  ">=",
  "'s'",
  "'",
  '"q"',
  '"',
  "1",
  "-7",
  "1.5",
  "1e",
  "1e400",
  "99999999999999999999",
  "order_id",
  "amount",
  "paid",
  "score",
  "raw_orders",
  "x",
  "--",
  "/*",
  "*/",
  ".",
  "\n",
  "\t",
  "é",
  "😀",
  "\u0000",
  "$",
  "?",
  "LIKE",
  "CAST",
  "CASE",
];
const ALPHABET = " \n\t'\"()*,.;-+/<>=!_abcxyzSELECTFROMWHEREANDOR0123456789é😀\\";

function check(text: string): "ok" | "error" {
  try {
    checkModelSql(new SourceFile("fuzz.sql", text), sources);
    return "ok";
  } catch (e) {
    if (e instanceof SluiceError) {
      ok(e.location !== undefined, `${e.code} without a location for ${JSON.stringify(text)}`);
      return "error";
    }
    throw new Error(`non-SluiceError for ${JSON.stringify(text)}: ${e}`, { cause: e });
  }
}

Deno.test("fuzz: random and mutated models fail only with located SluiceErrors", () => {
  const rand = seeded(SEED);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  const deadline = Date.now() + 20_000;
  const counts = { ok: 0, error: 0 };
  let n = 0;
  for (; n < 6000 && Date.now() < deadline; n++) {
    let text: string;
    const mode = n % 3;
    if (mode === 0) {
      const len = 1 + Math.floor(rand() * 16);
      text = Array.from({ length: len }, () => pick(TOKENS)).join(rand() < 0.8 ? " " : "");
    } else if (mode === 1) {
      const chars = [...pick(SEEDS)];
      const edits = 1 + Math.floor(rand() * 4);
      for (let e = 0; e < edits; e++) {
        const at = Math.floor(rand() * (chars.length + 1));
        const op = rand();
        if (op < 0.4) chars.splice(at, 1);
        else if (op < 0.8) chars.splice(at, 0, pick([...ALPHABET]));
        else chars.splice(at, 0, ` ${pick(TOKENS)} `);
      }
      text = chars.join("");
    } else {
      const words = pick(SEEDS).split(" ");
      const i = Math.floor(rand() * words.length);
      const j = Math.floor(rand() * words.length);
      [words[i], words[j]] = [words[j], words[i]];
      if (rand() < 0.5) words.splice(Math.floor(rand() * words.length), 1);
      text = words.join(" ");
    }
    counts[check(text)]++;
  }
  console.log(`fuzz: ${n} inputs (seed ${SEED}): ${counts.ok} accepted, ${counts.error} rejected`);
  ok(n >= 1000, `only ${n} inputs ran before the deadline`);
  ok(counts.ok > 0 && counts.error > 0);
});
