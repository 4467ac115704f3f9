/**
 * A SQL model resolved against its source: the parsed SELECT/FROM/WHERE checked against the
 * source schema into a projection and a typed predicate. Also the entry point to check a
 * bare predicate (the text after WHERE) against a schema.
 *
 * @example
 * ```ts
 * import { checkPredicateSql } from "./model.ts";
 * const expr = checkPredicateSql("amount >= 100", [
 *   { name: "amount", type: "BIGINT", nullable: false },
 * ]);
 * console.log(expr.kind); // compare
 * ```
 * @module
 */
import { SourceFile } from "../expr/diagnostic.ts";
import { diagnostic } from "../expr/diagnostic.ts";
import { TRUE_PREDICATE } from "../expr/ast.ts";
import type { Expr } from "../expr/ast.ts";
import type { SchemaField } from "../expr/schema.ts";
import { checkPredicate, resolveColumn } from "../expr/typecheck.ts";
import { parseModelSql, parsePredicateSql } from "./sql_parser.ts";
import type { ParsedModel } from "./sql_parser.ts";
import { isColumnName } from "./names.ts";

/** One output column: `source` is the input field, `name` the output name. */
export interface ProjectionColumn {
  source: string;
  name: string;
}

/** A model checked against its source schema. */
export interface CheckedModel {
  /** The source named in FROM. */
  from: string;
  projection: ProjectionColumn[];
  /** The output schema (projection with types and nullability of the input fields). */
  outputSchema: SchemaField[];
  /** The typed predicate; literal TRUE when the model has no WHERE. */
  predicate: Expr;
}

/**
 * Parse a model's SQL and check it against the schemas of the declared sources. Throws a
 * located SluiceError (`SQL_*`, `TYPE_*`), including `SQL_UNKNOWN_SOURCE`.
 */
export function checkModelSql(
  source: SourceFile,
  sources: ReadonlyMap<string, readonly SchemaField[]>,
): CheckedModel {
  const parsed = parseModelSql(source);
  return resolveModel(parsed, source, sources);
}

/** Resolve a parsed model against the declared sources. */
export function resolveModel(
  parsed: ParsedModel,
  source: SourceFile,
  sources: ReadonlyMap<string, readonly SchemaField[]>,
): CheckedModel {
  const schema = sources.get(parsed.from.name);
  if (!schema) {
    throw diagnostic(
      source,
      "SQL_UNKNOWN_SOURCE",
      `unknown source '${parsed.from.name}'; declared sources: ${[...sources.keys()].join(", ")}`,
      parsed.from.span,
      { source: parsed.from.name },
    );
  }
  const projection: ProjectionColumn[] = [];
  const outputSchema: SchemaField[] = [];
  const names = new Map<string, number>();
  for (const item of parsed.select) {
    const field = resolveColumn(item.column, schema, source, item.span);
    const name = item.alias ?? field.name;
    if (!isColumnName(name)) {
      throw diagnostic(
        source,
        "SQL_INVALID_NAME",
        `output column name '${name}' must match [A-Za-z_][A-Za-z0-9_]*`,
        item.span,
      );
    }
    if (names.has(name)) {
      throw diagnostic(
        source,
        "SQL_DUPLICATE_COLUMN",
        `output column '${name}' appears twice in SELECT; give one of them an alias with AS`,
        item.span,
        { column: name },
      );
    }
    names.set(name, projection.length);
    projection.push({ source: field.name, name });
    outputSchema.push({ name, type: field.type, nullable: field.nullable });
  }
  const predicate = parsed.where ? checkPredicate(parsed.where, schema, source) : TRUE_PREDICATE;
  return { from: parsed.from.name, projection, outputSchema, predicate };
}

/**
 * Parse and type-check a bare predicate (what follows WHERE) against a schema.
 * `file` names the text in diagnostics.
 * @example
 * ```ts
 * const expr = checkPredicateSql("amount >= 200 AND paid = TRUE", schema);
 * ```
 */
export function checkPredicateSql(
  text: string,
  schema: readonly SchemaField[],
  file = "<predicate>",
): Expr {
  const source = new SourceFile(file, text);
  return checkPredicate(parsePredicateSql(source), schema, source);
}
