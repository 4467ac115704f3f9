/**
 * The lexer of the SQL model subset. Keywords are case-insensitive; identifiers are
 * case-sensitive and may be double-quoted (`"order"`, with `""` for a quote). Strings use
 * single quotes with `''` for a quote. Comments: `-- to end of line` and `/* ... *\/`.
 *
 * @example
 * ```ts
 * import { tokenize } from "./sql_lexer.ts";
 * import { SourceFile } from "../expr/diagnostic.ts";
 * const tokens = tokenize(new SourceFile("m.sql", "SELECT a FROM t"));
 * console.log(tokens.map((t) => t.kind)); // word, word, word, word, eof
 * ```
 * @module
 */
import { diagnostic } from "../expr/diagnostic.ts";
import type { SourceFile, Span } from "../expr/diagnostic.ts";

/** Token kinds. `word` is an unquoted identifier or keyword; `quoted` a quoted identifier. */
export type TokenKind =
  | "word"
  | "quoted"
  | "string"
  | "integer"
  | "decimal"
  | "symbol"
  | "eof";

/** One token. `text` is the identifier, the unescaped string, the number or the symbol. */
export interface Token {
  kind: TokenKind;
  text: string;
  span: Span;
}

const SYMBOLS = [
  "<>",
  "!=",
  "<=",
  ">=",
  "||",
  "::",
  "=",
  "<",
  ">",
  "(",
  ")",
  ",",
  ";",
  ".",
  "*",
  "+",
  "-",
  "/",
  "%",
  "[",
  "]",
  "{",
  "}",
  "?",
  ":",
  "@",
  "!",
  "|",
  "&",
  "^",
  "~",
];

function isWordStart(c: string): boolean {
  return (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || c === "_";
}

function isWordPart(c: string): boolean {
  return isWordStart(c) || isDigit(c);
}

function isDigit(c: string): boolean {
  return c >= "0" && c <= "9";
}

/**
 * Split a model's text into tokens. Throws `SQL_UNEXPECTED_CHARACTER`,
 * `SQL_UNTERMINATED_STRING`, `SQL_UNTERMINATED_COMMENT` or `SQL_INVALID_NUMBER`.
 */
export function tokenize(source: SourceFile): Token[] {
  const text = source.text;
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\f") {
      i++;
      continue;
    }
    if (c === "-" && text[i + 1] === "-") {
      while (i < text.length && text[i] !== "\n") i++;
      continue;
    }
    if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      if (end < 0) {
        throw diagnostic(source, "SQL_UNTERMINATED_COMMENT", "comment '/*' is never closed", {
          start: i,
          end: i + 2,
        });
      }
      i = end + 2;
      continue;
    }
    const start = i;
    if (isWordStart(c)) {
      while (i < text.length && isWordPart(text[i])) i++;
      tokens.push({ kind: "word", text: text.slice(start, i), span: { start, end: i } });
      continue;
    }
    if (c === "'" || c === '"') {
      let value = "";
      i++;
      for (;;) {
        if (i >= text.length) {
          throw diagnostic(
            source,
            "SQL_UNTERMINATED_STRING",
            c === "'" ? "string literal is never closed" : "quoted identifier is never closed",
            { start, end: start + 1 },
          );
        }
        if (text[i] === c) {
          if (text[i + 1] === c) {
            value += c;
            i += 2;
            continue;
          }
          i++;
          break;
        }
        value += text[i];
        i++;
      }
      if (c === '"' && value.length === 0) {
        throw diagnostic(source, "SQL_SYNTAX", "a quoted identifier cannot be empty", {
          start,
          end: i,
        });
      }
      tokens.push({ kind: c === "'" ? "string" : "quoted", text: value, span: { start, end: i } });
      continue;
    }
    if (isDigit(c) || (c === "." && isDigit(text[i + 1] ?? ""))) {
      let decimal = false;
      while (i < text.length && isDigit(text[i])) i++;
      if (text[i] === "." && isDigit(text[i + 1] ?? "")) {
        decimal = true;
        i++;
        while (i < text.length && isDigit(text[i])) i++;
      } else if (text[i] === "." && i > start) {
        decimal = true; // "1." is a DOUBLE, as in most SQL dialects
        i++;
      }
      if (text[i] === "e" || text[i] === "E") {
        let j = i + 1;
        if (text[j] === "+" || text[j] === "-") j++;
        if (!isDigit(text[j] ?? "")) {
          throw diagnostic(source, "SQL_INVALID_NUMBER", "exponent has no digits", {
            start,
            end: j,
          });
        }
        while (j < text.length && isDigit(text[j])) j++;
        decimal = true;
        i = j;
      }
      if (i < text.length && isWordPart(text[i])) {
        let j = i;
        while (j < text.length && isWordPart(text[j])) j++;
        throw diagnostic(
          source,
          "SQL_INVALID_NUMBER",
          `invalid number '${text.slice(start, j)}'`,
          { start, end: j },
        );
      }
      tokens.push({
        kind: decimal ? "decimal" : "integer",
        text: text.slice(start, i),
        span: { start, end: i },
      });
      continue;
    }
    const symbol = SYMBOLS.find((s) => text.startsWith(s, i));
    if (symbol) {
      i += symbol.length;
      tokens.push({ kind: "symbol", text: symbol, span: { start, end: i } });
      continue;
    }
    const cp = text.codePointAt(i) ?? 0;
    const ch = String.fromCodePoint(cp);
    throw diagnostic(
      source,
      "SQL_UNEXPECTED_CHARACTER",
      `unexpected character '${ch}' (U+${cp.toString(16).toUpperCase().padStart(4, "0")})`,
      { start, end: start + ch.length },
    );
  }
  tokens.push({ kind: "eof", text: "", span: { start: text.length, end: text.length } });
  return tokens;
}
