/**
 * Private helpers to read a YAML document node by node with located diagnostics: every
 * value is checked against the expected shape, unknown keys are errors, and problems are
 * collected (not thrown one at a time) so `sluice validate` reports them all.
 * @module
 */
import { isAlias, isMap, isScalar, isSeq } from "npm:yaml@2.9.1";
import type { Node, Pair, YAMLMap, YAMLSeq } from "npm:yaml@2.9.1";
import type { ErrorCode, SluiceError } from "../errors.ts";
import { diagnostic } from "../expr/diagnostic.ts";
import { SourceFile } from "../expr/diagnostic.ts";
import type { Span } from "../expr/diagnostic.ts";
import { isName } from "./names.ts";

/** A YAML node or nothing (an absent or empty value). */
export type YNode = Node | null | undefined;

/** A map's entries by key, with the key's span, in document order. */
export interface MapEntry {
  key: string;
  keySpan: Span;
  value: YNode;
}

/** Collects located errors while reading a YAML document. */
export class YamlReader {
  readonly errors: SluiceError[] = [];

  constructor(readonly source: SourceFile) {}

  /** The span of a node (falls back to `fallback` for an absent node). */
  span(node: YNode, fallback: Span): Span {
    const range = node?.range;
    if (!range) return fallback;
    return { start: range[0], end: Math.max(range[0] + 1, range[1]) };
  }

  error(code: ErrorCode, message: string, span: Span, evidence?: Record<string, unknown>): void {
    this.errors.push(diagnostic(this.source, code, message, span, evidence));
  }

  /**
   * An error about a value that may be a secret: reported at `span`, its excerpt showing `hidden`
   * (default: `span`) as `*` so the value is never echoed.
   */
  secretError(
    code: ErrorCode,
    message: string,
    span: Span,
    evidence?: Record<string, unknown>,
    hidden: Span = span,
  ): void {
    const text = this.source.text;
    const stars = [...text.slice(hidden.start, hidden.end)].map((ch) => ch === "\n" ? ch : "*");
    const masked = new SourceFile(
      this.source.file,
      text.slice(0, hidden.start) + stars.join("") + text.slice(hidden.end),
    );
    this.errors.push(diagnostic(masked, code, message, span, evidence));
  }

  /**
   * Read a map, reporting unknown keys (`MANIFEST_UNKNOWN_KEY`). Returns null (and reports
   * `MANIFEST_WRONG_TYPE`) when the node is not a map.
   */
  map(
    node: YNode,
    where: string,
    allowed: readonly string[],
    fallback: Span,
  ): Map<string, MapEntry> | null {
    if (!this.notAlias(node, fallback)) return null;
    if (!isMap(node)) {
      this.error(
        "MANIFEST_WRONG_TYPE",
        `${where} must be a mapping, found ${kindOf(node)}`,
        this.span(node, fallback),
      );
      return null;
    }
    const out = new Map<string, MapEntry>();
    for (const pair of (node as YAMLMap).items as Pair<Node | null, Node | null>[]) {
      const keyNode = pair.key;
      const keySpan = this.span(keyNode, fallback);
      if (!isScalar(keyNode) || typeof keyNode.value !== "string") {
        this.error("MANIFEST_WRONG_TYPE", `keys of ${where} must be strings`, keySpan);
        continue;
      }
      const key = keyNode.value;
      if (!allowed.includes("*") && !allowed.includes(key)) {
        this.error(
          "MANIFEST_UNKNOWN_KEY",
          `unknown key '${key}' in ${where}; allowed keys: ${allowed.join(", ")}`,
          keySpan,
          { key },
        );
        continue;
      }
      out.set(key, { key, keySpan, value: pair.value });
    }
    return out;
  }

  /** Read a sequence's items, or null (reported) when the node is not a sequence. */
  seq(node: YNode, where: string, fallback: Span): YNode[] | null {
    if (!this.notAlias(node, fallback)) return null;
    if (!isSeq(node)) {
      this.error(
        "MANIFEST_WRONG_TYPE",
        `${where} must be a list, found ${kindOf(node)}`,
        this.span(node, fallback),
      );
      return null;
    }
    return (node as YAMLSeq<Node | null>).items;
  }

  /**
   * Whether a mapping's key is a name (`[a-z][a-z0-9_]*`, at most 64 characters: `isName`);
   * reports `MANIFEST_INVALID_NAME` at the key, calling it `what` (e.g. `model name`), when not.
   */
  nameKey(entry: MapEntry, what: string): boolean {
    if (isName(entry.key)) return true;
    this.error(
      "MANIFEST_INVALID_NAME",
      `${what} '${entry.key}' must match [a-z][a-z0-9_]* (at most 64 characters)`,
      entry.keySpan,
    );
    return false;
  }

  /** A required entry: reports `MANIFEST_MISSING_KEY` at `at` when absent. */
  required(entries: Map<string, MapEntry>, key: string, where: string, at: Span): MapEntry | null {
    const entry = entries.get(key);
    if (!entry) {
      this.error("MANIFEST_MISSING_KEY", `${where} is missing required key '${key}'`, at, { key });
      return null;
    }
    return entry;
  }

  /** A string scalar, or null (reported). */
  string(entry: MapEntry, where: string): string | null {
    const node = entry.value;
    if (!this.notAlias(node, entry.keySpan)) return null;
    if (isScalar(node) && typeof node.value === "string") return node.value;
    this.error(
      "MANIFEST_WRONG_TYPE",
      `${where} must be a string, found ${kindOf(node)}`,
      this.span(node, entry.keySpan),
    );
    return null;
  }

  /** A boolean scalar, or null (reported). */
  boolean(entry: MapEntry, where: string): boolean | null {
    const node = entry.value;
    if (!this.notAlias(node, entry.keySpan)) return null;
    if (isScalar(node) && typeof node.value === "boolean") return node.value;
    this.error(
      "MANIFEST_WRONG_TYPE",
      `${where} must be true or false, found ${kindOf(node)}`,
      this.span(node, entry.keySpan),
    );
    return null;
  }

  /** An integer scalar within [min, max], or null (reported). */
  integer(entry: MapEntry, where: string, min: number, max: number): number | null {
    const node = entry.value;
    if (!this.notAlias(node, entry.keySpan)) return null;
    if (isScalar(node) && typeof node.value === "number" && Number.isInteger(node.value)) {
      if (node.value < min || node.value > max) {
        this.error(
          "MANIFEST_INVALID_VALUE",
          `${where} must be between ${min} and ${max}, found ${node.value}`,
          this.span(node, entry.keySpan),
        );
        return null;
      }
      return node.value;
    }
    this.error(
      "MANIFEST_WRONG_TYPE",
      `${where} must be an integer, found ${kindOf(node)}`,
      this.span(node, entry.keySpan),
    );
    return null;
  }

  /** The span of an entry's value (or its key when the value is empty). */
  valueSpan(entry: MapEntry): Span {
    return this.span(entry.value, entry.keySpan);
  }

  notAlias(node: YNode, fallback: Span): boolean {
    if (isAlias(node)) {
      this.error(
        "MANIFEST_WRONG_TYPE",
        "YAML aliases are not supported in sluice.yaml; write the value out",
        this.span(node, fallback),
      );
      return false;
    }
    return true;
  }
}

/** A short description of a node's kind for messages. */
export function kindOf(node: YNode): string {
  if (node === null || node === undefined) return "nothing";
  if (isMap(node)) return "a mapping";
  if (isSeq(node)) return "a list";
  if (isScalar(node)) {
    const v = node.value;
    if (v === null) return "null";
    if (typeof v === "string") return `the string '${v}'`;
    if (typeof v === "number") return `the number ${v}`;
    if (typeof v === "boolean") return `${v}`;
    return "a scalar";
  }
  return "a value";
}
