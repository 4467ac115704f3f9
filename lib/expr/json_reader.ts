/**
 * A strict JSON reader for input records. Unlike `JSON.parse` it keeps number lexemes (so
 * BIGINT values are decoded exactly with `BigInt`), keeps object members in order and
 * reports duplicate keys. It accepts RFC 8259 JSON only: no comments, no trailing commas,
 * no NaN, no leading zeros, no unescaped control characters.
 *
 * @example
 * ```ts
 * import { readJson } from "./json_reader.ts";
 * const value = readJson('{"amount": 9007199254740993}');
 * if (value.kind === "object") console.log(value.members[0].value); // { kind: "number", text: "9007199254740993" }
 * ```
 * @module
 */

/** A JSON value with number lexemes kept as text and object members in order. */
export type JsonValue =
  | { kind: "null" }
  | { kind: "boolean"; value: boolean }
  | { kind: "number"; text: string }
  | { kind: "string"; value: string }
  | { kind: "array"; items: JsonValue[] }
  | { kind: "object"; members: Array<{ key: string; value: JsonValue }> };

/** A syntax error with the offset at which reading stopped. */
export class JsonSyntaxError extends Error {
  constructor(message: string, readonly offset: number) {
    super(`${message} at offset ${offset}`);
    this.name = "JsonSyntaxError";
  }
}

/** Nesting deeper than this is rejected instead of exhausting the stack. */
const MAX_DEPTH = 256;

/** Read one JSON document; whitespace around it is allowed, anything else is an error. */
export function readJson(text: string): JsonValue {
  const reader = new Reader(text);
  reader.ws();
  const value = reader.value(0);
  reader.ws();
  if (reader.pos !== text.length) throw new JsonSyntaxError("trailing characters", reader.pos);
  return value;
}

class Reader {
  pos = 0;
  constructor(readonly text: string) {}

  ws(): void {
    const t = this.text;
    while (this.pos < t.length) {
      const c = t.charCodeAt(this.pos);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) this.pos++;
      else break;
    }
  }

  fail(message: string): never {
    throw new JsonSyntaxError(message, this.pos);
  }

  literal(word: string): void {
    if (!this.text.startsWith(word, this.pos)) this.fail("unexpected token");
    this.pos += word.length;
  }

  value(depth: number): JsonValue {
    if (depth > MAX_DEPTH) this.fail("nesting too deep");
    const c = this.text[this.pos];
    switch (c) {
      case "{":
        return this.object(depth);
      case "[":
        return this.array(depth);
      case '"':
        return { kind: "string", value: this.string() };
      case "t":
        this.literal("true");
        return { kind: "boolean", value: true };
      case "f":
        this.literal("false");
        return { kind: "boolean", value: false };
      case "n":
        this.literal("null");
        return { kind: "null" };
      default:
        if (c === "-" || (c >= "0" && c <= "9")) return { kind: "number", text: this.number() };
        return this.fail(c === undefined ? "unexpected end of input" : "unexpected character");
    }
  }

  object(depth: number): JsonValue {
    this.pos++; // {
    const members: Array<{ key: string; value: JsonValue }> = [];
    this.ws();
    if (this.text[this.pos] === "}") {
      this.pos++;
      return { kind: "object", members };
    }
    for (;;) {
      this.ws();
      if (this.text[this.pos] !== '"') this.fail("expected a string key");
      const key = this.string();
      this.ws();
      if (this.text[this.pos] !== ":") this.fail("expected ':'");
      this.pos++;
      this.ws();
      members.push({ key, value: this.value(depth + 1) });
      this.ws();
      const c = this.text[this.pos];
      if (c === ",") {
        this.pos++;
        continue;
      }
      if (c === "}") {
        this.pos++;
        return { kind: "object", members };
      }
      this.fail("expected ',' or '}'");
    }
  }

  array(depth: number): JsonValue {
    this.pos++; // [
    const items: JsonValue[] = [];
    this.ws();
    if (this.text[this.pos] === "]") {
      this.pos++;
      return { kind: "array", items };
    }
    for (;;) {
      this.ws();
      items.push(this.value(depth + 1));
      this.ws();
      const c = this.text[this.pos];
      if (c === ",") {
        this.pos++;
        continue;
      }
      if (c === "]") {
        this.pos++;
        return { kind: "array", items };
      }
      this.fail("expected ',' or ']'");
    }
  }

  string(): string {
    const t = this.text;
    this.pos++; // opening quote
    let out = "";
    let run = this.pos;
    for (;;) {
      if (this.pos >= t.length) this.fail("unterminated string");
      const c = t.charCodeAt(this.pos);
      if (c === 0x22) {
        out += t.slice(run, this.pos);
        this.pos++;
        return out;
      }
      if (c < 0x20) this.fail("unescaped control character in string");
      if (c !== 0x5c) {
        this.pos++;
        continue;
      }
      out += t.slice(run, this.pos);
      const e = t[this.pos + 1];
      switch (e) {
        case '"':
          out += '"';
          break;
        case "\\":
          out += "\\";
          break;
        case "/":
          out += "/";
          break;
        case "b":
          out += "\b";
          break;
        case "f":
          out += "\f";
          break;
        case "n":
          out += "\n";
          break;
        case "r":
          out += "\r";
          break;
        case "t":
          out += "\t";
          break;
        case "u": {
          const hex = t.slice(this.pos + 2, this.pos + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail("invalid \\u escape");
          out += String.fromCharCode(parseInt(hex, 16));
          this.pos += 4;
          break;
        }
        default:
          this.fail("invalid escape");
      }
      this.pos += 2;
      run = this.pos;
    }
  }

  number(): string {
    const m = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/.exec(
      this.text.slice(this.pos, this.pos + 4096),
    );
    if (!m) this.fail("invalid number");
    const next = this.text[this.pos + m[0].length];
    if (next !== undefined && /[0-9.eE+-]/.test(next)) this.fail("invalid number");
    this.pos += m[0].length;
    return m[0];
  }
}
