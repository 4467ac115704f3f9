/**
 * The walk every journey's decision makes over its table: the rows in table order, each run of
 * rows of one kind (`per`: the operation, or one subject such as a runner, a topic or a
 * connector) asked for each of its subjects in turn — each subject through all the rows of the
 * run before the next subject — and the first row that does not skip decides. The order lives
 * only in the table; a journey's guards say what one row decides for one subject.
 *
 * @example
 * ```ts
 * import { walkTable } from "./table_walk.ts";
 * const rows = [{ step: "a", per: "operation" }, { step: "b", per: "item" }] as const;
 * const d = walkTable(rows, (per) => (per === "operation" ? [0] : [1, 2]), (row, n) =>
 *   row.step === "b" && n === 2 ? `${row.step}${n}` : null);
 * console.log(d); // b2
 * ```
 * @module
 */

/**
 * The first decision of `ask` over the table's rows, walked as the module documentation says;
 * `subjects` gives the subjects a run of rows of one `per` is asked for (the operation's rows:
 * one). A table that decides nothing is a programming error (its last row always decides).
 *
 * @example
 * ```ts
 * import { walkTable } from "./table_walk.ts";
 * // walkTable(CONNECTOR_TABLE, (per) => per === "operation" ? [null] : readings.actions, ask)
 * ```
 */
export function walkTable<Row extends { readonly per: string }, Subject, Decision>(
  table: readonly Row[],
  subjects: (per: Row["per"]) => readonly Subject[],
  ask: (row: Row, subject: Subject) => Decision | null,
): Decision {
  let i = 0;
  while (i < table.length) {
    const per = table[i].per;
    let end = i;
    while (end < table.length && table[end].per === per) end++;
    const rows = table.slice(i, end);
    for (const subject of subjects(per)) {
      for (const row of rows) {
        const d = ask(row, subject);
        if (d !== null) return d;
      }
    }
    i = end;
  }
  throw new Error("the table's rows decided nothing (its last row, the commit, always decides)");
}
