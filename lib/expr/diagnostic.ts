/**
 * Diagnostics that point into a project file: `file:line:col`, a stable code, and a caret
 * excerpt of the offending line. Every manifest, SQL and type error is built here so that
 * they all look the same.
 *
 * @example
 * ```ts
 * import { diagnostic, SourceFile } from "./diagnostic.ts";
 * const src = new SourceFile("models/m.sql", "SELECT a FROM t JOIN u");
 * const err = diagnostic(src, "SQL_UNSUPPORTED", "JOIN is not supported", { start: 16, end: 20 });
 * console.log(err.message); // models/m.sql:1:17: JOIN is not supported + excerpt
 * ```
 * @module
 */
import { type ErrorCode, SluiceError } from "../errors.ts";
import type { SourceLocation } from "../errors.ts";
import { maskSecrets, maskSqlSecrets } from "../secrets.ts";

const MASKED = new WeakMap<SourceFile, SourceFile>();

/** How a source's text is masked: SQL by its own rule as well (a model file's literals). */
function maskerOf(source: SourceFile): (text: string) => string {
  return /\.sql$/i.test(source.file) ? maskSqlSecrets : maskSecrets;
}

/** The source with every secret-looking value masked ({@link maskSecrets}), once per file. */
function masked(source: SourceFile): SourceFile {
  let m = MASKED.get(source);
  if (!m) {
    m = new SourceFile(source.file, maskerOf(source)(source.text));
    MASKED.set(source, m);
  }
  return m;
}

/** A half-open range of UTF-16 offsets into a source text. */
export interface Span {
  start: number;
  end: number;
}

/** A named text with a line index, used to turn offsets into 1-based line and column. */
export class SourceFile {
  /** Offsets at which each line starts. */
  readonly #lineStarts: number[];

  constructor(readonly file: string, readonly text: string) {
    this.#lineStarts = [0];
    for (let i = 0; i < text.length; i++) {
      if (text.charCodeAt(i) === 10) this.#lineStarts.push(i + 1);
    }
  }

  /** The 1-based line and column (counted in code points) of an offset. */
  locate(offset: number): SourceLocation {
    const at = Math.max(0, Math.min(offset, this.text.length));
    let lo = 0;
    let hi = this.#lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.#lineStarts[mid] <= at) lo = mid;
      else hi = mid - 1;
    }
    const lineStart = this.#lineStarts[lo];
    const column = [...this.text.slice(lineStart, at)].length + 1;
    return { file: this.file, line: lo + 1, column };
  }

  /** The text of a 1-based line, without its line break. */
  lineText(line: number): string {
    const start = this.#lineStarts[line - 1] ?? this.text.length;
    const next = this.#lineStarts[line];
    const end = next === undefined ? this.text.length : next - 1;
    return this.text.slice(start, end).replace(/\r$/, "");
  }
}

/** The caret excerpt for a span: the line, then `^` under the span (on its first line). */
export function excerpt(source: SourceFile, span: Span): string {
  const from = source.locate(span.start);
  const line = source.lineText(from.line).replace(/\t/g, " ");
  const lineLength = [...line].length;
  const to = source.locate(Math.max(span.start, span.end));
  const lastColumn = to.line === from.line ? to.column : lineLength + 1;
  const width = Math.max(1, lastColumn - from.column);
  const gutter = String(from.line);
  const pad = " ".repeat(gutter.length);
  return `${pad} |\n${gutter} | ${line}\n${pad} | ${" ".repeat(from.column - 1)}${
    "^".repeat(width)
  }`;
}

/**
 * A {@link SluiceError} located in a source file. The message is
 * `file:line:col: text` followed by the caret excerpt; `location` carries the position. Values
 * that look secret are masked in both, character for character.
 */
export function diagnostic(
  source: SourceFile,
  code: ErrorCode,
  message: string,
  span: Span,
  evidence?: Record<string, unknown>,
): SluiceError {
  const location = source.locate(span.start);
  // a project file may hold a secret where none belongs: never echo it (same columns, masked)
  return new SluiceError(
    code,
    `${location.file}:${location.line}:${location.column}: ${maskerOf(source)(message)}\n${
      excerpt(masked(source), span)
    }`,
    { location, ...(evidence ? { evidence } : {}) },
  );
}
