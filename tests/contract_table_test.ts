// No services: docs/contract.md's conformance table, checked against the repository's files.
// Every row of the table names a rule of the contract, where the code enforces it (a file and
// the names that must occur in it) and the tests that prove it (a file and the exact test
// names, JUnit method names or probe check IDs that must occur in it), with a status. This test
// keeps those references true: a renamed function, a moved file or a reworded test name makes
// it fail and names the row.
import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url);
const DOC = "docs/contract.md";

/** The four statuses a row may have. */
const STATUSES = ["HOLDS", "PARTIAL", "DEVIATION", "NOT BUILDABLE HERE"] as const;
type Status = typeof STATUSES[number];

/**
 * The contract's own section headings, in its order, then the trust boundary's (issue 27, the
 * hostile-input rules): the table is grouped under them.
 */
const SECTIONS = [
  "Status and purpose",
  "First supported transition",
  "Reviewed and durable evidence",
  "Execution and interruption boundaries",
  "Resume is not read-only recovery",
  "Durable resume authorization",
  "Reviewed coordinator and completed-result finalization",
  "Acceptance requirements",
  "Public command contract",
  "Hostile input (issue 27)",
  "Production clusters (issue 29)",
];

const HEADER = [
  "ID",
  "Rule (contract)",
  "Enforced in",
  "Proven by",
  "Status",
  "What is missing / why",
];

/** One parsed row. */
interface Row {
  line: number;
  section: string | null;
  id: string;
  rule: string;
  enforced: string;
  proven: string;
  status: string;
  note: string;
}

/** A reference: a repository file and the names that must occur in it. */
interface Ref {
  path: string;
  names: string[];
}

/** Split a table line into cells: `|` outside code spans and not escaped. */
function cells(line: string): string[] {
  const out: string[] = [];
  let cur = "";
  let code = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (ch === "\\" && line[i + 1] === "|") {
      cur += "|";
      i++;
    } else if (ch === "`") {
      code = !code;
      cur += ch;
    } else if (ch === "|" && !code) {
      out.push(cur.trim());
      cur = "";
    } else cur += ch;
  }
  out.push(cur.trim());
  // a table line starts and ends with `|`: drop the empty outer cells
  return out.slice(1, -1);
}

/** The references of a cell: groups separated by `<br>`, each `path` then one or more names. */
function refs(cell: string): { refs: Ref[]; problems: string[] } {
  const out: Ref[] = [];
  const problems: string[] = [];
  const text = cell.trim();
  if (text === "" || text === "—") return { refs: out, problems };
  for (const part of text.split(/<br\s*\/?>/)) {
    const spans = [...part.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
    if (spans.length === 0) {
      problems.push(`"${part.trim()}" names no file in backticks`);
      continue;
    }
    const [path, ...names] = spans;
    if (names.length === 0) problems.push(`${path} is named without a symbol or test name`);
    out.push({ path, names });
  }
  return { refs: out, problems };
}

/** What a test reference must look like in its file: a JUnit method, or a quoted literal. */
function testNameFound(path: string, text: string, name: string): boolean {
  if (path.endsWith(".java")) return text.includes(`void ${name}(`);
  if (path.endsWith(".ts")) return ['"', "`", "'"].some((q) => text.includes(`${q}${name}${q}`));
  return text.includes(name);
}

/** Parse the document and check every row; the problems found, each naming its row. */
export function checkContractTable(doc: string, read: (path: string) => string | null): string[] {
  const problems: string[] = [];
  const rows: Row[] = [];
  let section: string | null = null;
  const headings: string[] = [];
  let headerSeen = 0;
  doc.split("\n").forEach((line, i) => {
    const h = /^## (.+?)\s*$/.exec(line);
    if (h) {
      section = h[1];
      headings.push(section);
      return;
    }
    if (!line.startsWith("|")) return;
    const c = cells(line);
    if (c[0] === "ID") {
      headerSeen++;
      if (JSON.stringify(c) !== JSON.stringify(HEADER)) {
        problems.push(
          `line ${i + 1}: table header ${JSON.stringify(c)}, not ${JSON.stringify(HEADER)}`,
        );
      }
      return;
    }
    if (/^-+$/.test(c[0]?.replaceAll(":", "") ?? "")) return; // the delimiter row
    if (c.length !== HEADER.length) {
      problems.push(`line ${i + 1}: ${c.length} cells, not ${HEADER.length}`);
      return;
    }
    const [id, rule, enforced, proven, status, note] = c;
    rows.push({ line: i + 1, section, id, rule, enforced, proven, status, note });
  });

  // the contract's sections, in order, each with rows
  const tableSections = headings.filter((s) => SECTIONS.includes(s));
  if (JSON.stringify(tableSections) !== JSON.stringify(SECTIONS)) {
    problems.push(
      `sections ${JSON.stringify(tableSections)}, not the contract's ${JSON.stringify(SECTIONS)}`,
    );
  }
  for (const s of SECTIONS) {
    if (!rows.some((r) => r.section === s)) problems.push(`section "${s}" has no row`);
  }
  if (headerSeen === 0) problems.push("no table header");

  // IDs: C1, C2, ... unique and consecutive, in document order
  const seen = new Set<string>();
  rows.forEach((r, n) => {
    const where = `line ${r.line} (${r.id})`;
    if (seen.has(r.id)) problems.push(`${where}: duplicate rule ID`);
    seen.add(r.id);
    if (r.id !== `C${n + 1}`) problems.push(`${where}: expected ID C${n + 1}`);
    if (r.section === null || !SECTIONS.includes(r.section)) {
      problems.push(`${where}: not under one of the contract's section headings`);
    }
    if (r.rule.trim() === "") problems.push(`${where}: no rule text`);
    if (!(STATUSES as readonly string[]).includes(r.status)) {
      problems.push(`${where}: status "${r.status}" is not one of ${STATUSES.join(", ")}`);
    }
    const noteText = r.note.trim();
    if (r.status !== "HOLDS" && (noteText === "" || noteText === "—")) {
      problems.push(`${where}: a ${r.status} row needs its explanation`);
    }
    const enforced = refs(r.enforced);
    const proven = refs(r.proven);
    for (const p of [...enforced.problems, ...proven.problems]) problems.push(`${where}: ${p}`);
    if (r.status === "HOLDS" && (enforced.refs.length === 0 || proven.refs.length === 0)) {
      problems.push(`${where}: HOLDS needs both the enforcing code and a test`);
    }
    for (const ref of enforced.refs) {
      const text = read(ref.path);
      if (text === null) {
        problems.push(`${where}: enforcing file ${ref.path} does not exist`);
        continue;
      }
      for (const name of ref.names) {
        if (!text.includes(name)) problems.push(`${where}: ${ref.path} has no "${name}"`);
      }
    }
    for (const ref of proven.refs) {
      const text = read(ref.path);
      if (text === null) {
        problems.push(`${where}: test file ${ref.path} does not exist`);
        continue;
      }
      for (const name of ref.names) {
        if (!testNameFound(ref.path, text, name)) {
          problems.push(`${where}: ${ref.path} has no test named "${name}"`);
        }
      }
    }
  });

  // the summary in the introduction counts exactly the rows
  const summary = doc.split("\n").find((l) => l.startsWith("**Summary:**"));
  if (!summary) problems.push('no "**Summary:**" line in the introduction');
  else {
    const counted = new Map<Status, number>(STATUSES.map((s) => [s, 0]));
    for (const r of rows) {
      if (counted.has(r.status as Status)) {
        counted.set(r.status as Status, counted.get(r.status as Status)! + 1);
      }
    }
    for (const s of STATUSES) {
      const m = new RegExp(`(\\d+) ${s}\\b`).exec(summary);
      const stated = m ? Number(m[1]) : null;
      if (stated !== counted.get(s)) {
        problems.push(`summary says ${stated ?? "nothing"} ${s}, the table has ${counted.get(s)}`);
      }
    }
    const total = /(\d+) rules/.exec(summary);
    if (!total || Number(total[1]) !== rows.length) {
      problems.push(`summary says ${total?.[1] ?? "no"} rules, the table has ${rows.length}`);
    }
  }
  if (rows.length === 0) problems.push("no rows");
  return problems;
}

/** A repository file's text, or null when it is not a regular file of the repository. */
function readRepoFile(path: string): string | null {
  if (path.startsWith("/") || path.split("/").includes("..")) return null;
  try {
    const url = new URL(path, ROOT);
    if (!Deno.statSync(url).isFile) return null;
    return Deno.readTextFileSync(url);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
}

Deno.test("docs/contract.md: every rule's references exist, statuses are explained, the summary counts the rows", () => {
  const doc = Deno.readTextFileSync(new URL(DOC, ROOT));
  const problems = checkContractTable(doc, readRepoFile);
  assert.deepEqual(problems, [], `${DOC}:\n${problems.join("\n")}`);
});

Deno.test("the table check finds each kind of broken row", () => {
  const files: Record<string, string> = {
    "lib/a.ts": "export function enforce() {}",
    "lib/a_test.ts": 'Deno.test("proves it", () => {});',
    "runner/T.java": "  void provesIt() {}",
  };
  const read = (p: string) => files[p] ?? null;
  const head =
    "| ID | Rule (contract) | Enforced in | Proven by | Status | What is missing / why |\n" +
    "| -- | -- | -- | -- | -- | -- |\n";
  const sections = (rows: string) =>
    SECTIONS.map((s, i) =>
      `## ${s}\n\n${head}${i === 0 ? rows : `| C${i + 99} | r | — | — | PARTIAL | x |\n`}`
    )
      .join("\n");
  const good =
    "| C1 | a rule | `lib/a.ts` `enforce` | `lib/a_test.ts` `proves it`<br>`runner/T.java` `provesIt` | HOLDS | |\n";
  // renumber the filler rows of the other sections consecutively after the first section's
  const doc = (rows: string, summary: string) => {
    let n = rows.split("\n").filter((l) => l.startsWith("|")).length;
    const text = sections(rows).replace(/\| C\d{3} \|/g, () => `| C${++n} |`);
    return `**Summary:** ${summary}\n\n${text}`;
  };
  // one filler row (PARTIAL) in every section but the first
  const fillers = SECTIONS.length - 1;
  const summary = (holds: number, rules: number) =>
    `${holds} HOLDS, ${fillers} PARTIAL, 0 DEVIATION, 0 NOT BUILDABLE HERE; ${rules} rules.`;
  const ok = doc(good, summary(1, fillers + 1));
  assert.deepEqual(checkContractTable(ok, read), []);

  const broken: Array<[string, string, RegExp]> = [
    [
      "a missing file",
      good.replace("lib/a.ts", "lib/b.ts"),
      /enforcing file lib\/b\.ts does not exist/,
    ],
    [
      "a missing symbol",
      good.replace("`enforce`", "`enforced_not`"),
      /lib\/a\.ts has no "enforced_not"/,
    ],
    [
      "a reworded test",
      good.replace("proves it", "proves that"),
      /has no test named "proves that"/,
    ],
    [
      "a JUnit method",
      good.replace("`provesIt`", "`provesThat`"),
      /runner\/T\.java has no test named/,
    ],
    ["an unknown status", good.replace("HOLDS", "OK"), /status "OK" is not one of/],
    [
      "an unexplained partial",
      good.replace("HOLDS", "PARTIAL"),
      /a PARTIAL row needs its explanation/,
    ],
    [
      "a HOLDS without a test",
      good.replace(/`lib\/a_test\.ts`.*`provesIt`/, "—"),
      /HOLDS needs both/,
    ],
    ["a gap in the IDs", good.replace("C1", "C2"), /expected ID C1/],
  ];
  for (const [what, row, expected] of broken) {
    const problems = checkContractTable(
      doc(row, summary(1, fillers + 1)),
      read,
    );
    assert.ok(problems.some((p) => expected.test(p)), `${what}: ${JSON.stringify(problems)}`);
  }
  const miscounted = checkContractTable(
    doc(good, summary(2, fillers + 2)),
    read,
  );
  assert.ok(
    miscounted.some((p) => /summary says 2 HOLDS, the table has 1/.test(p)),
    `${miscounted}`,
  );
  assert.ok(
    miscounted.some((p) => p === `summary says ${fillers + 2} rules, the table has ${fillers + 1}`),
    `${miscounted}`,
  );
});
