/**
 * The reserved words of the SQL model subset: they cannot be unquoted identifiers. The parser
 * rejects them as names and the canonical printer quotes a column that is spelled like one, so
 * both read the same list.
 *
 * @example
 * ```ts
 * import { isReservedWord } from "./keywords.ts";
 * console.log(isReservedWord("order")); // true: write "order" as a quoted identifier
 * ```
 * @module
 */

/** Reserved words, upper-case (keywords are case-insensitive). */
export const RESERVED: ReadonlySet<string> = new Set([
  "SELECT",
  "FROM",
  "WHERE",
  "AS",
  "AND",
  "OR",
  "NOT",
  "IS",
  "NULL",
  "IN",
  "BETWEEN",
  "TRUE",
  "FALSE",
  "JOIN",
  "INNER",
  "LEFT",
  "RIGHT",
  "FULL",
  "OUTER",
  "CROSS",
  "NATURAL",
  "ON",
  "USING",
  "GROUP",
  "BY",
  "HAVING",
  "ORDER",
  "LIMIT",
  "OFFSET",
  "FETCH",
  "UNION",
  "INTERSECT",
  "EXCEPT",
  "MINUS",
  "DISTINCT",
  "ALL",
  "ANY",
  "SOME",
  "CAST",
  "CASE",
  "WHEN",
  "THEN",
  "ELSE",
  "END",
  "LIKE",
  "ILIKE",
  "RLIKE",
  "SIMILAR",
  "REGEXP",
  "ESCAPE",
  "EXISTS",
  "WITH",
  "WINDOW",
  "OVER",
  "PARTITION",
  "EMIT",
  "INTERVAL",
  "INSERT",
  "UPDATE",
  "DELETE",
  "VALUES",
  "INTO",
  "CREATE",
  "DROP",
  "TABLE",
  "LATERAL",
  "UNNEST",
  "QUALIFY",
]);

/** Whether `word` is reserved (case-insensitive). */
export function isReservedWord(word: string): boolean {
  return RESERVED.has(word.toUpperCase());
}
