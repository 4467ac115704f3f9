/**
 * What looks secret, decided once for every layer: a field name ({@link isSensitiveKey}) and, in
 * free text, the values {@link maskSecrets} masks. A leaf module (like `errors.ts`): the
 * diagnostics of the predicate language, the project reader and the redaction of every display
 * (`lib/artifact/redact.ts`) all read these rules from here.
 *
 * @example
 * ```ts
 * import { isSensitiveKey, maskSecrets } from "./secrets.ts";
 * console.log(isSensitiveKey("DB_PASSWORD"), maskSecrets("token: abc")); // true "token: ***"
 * ```
 * @module
 */

/** Field-name fragments whose values are hidden (case-insensitive substring match). */
export const SENSITIVE_FRAGMENTS: readonly string[] = [
  "token",
  "password",
  "passwd",
  "secret",
  "credential",
  "api_key",
  "apikey",
  "private_key",
];

/** Whether a field name is sensitive. */
export function isSensitiveKey(key: string): boolean {
  const lower = key.toLowerCase();
  return SENSITIVE_FRAGMENTS.some((f) => lower.includes(f));
}

/** A value that only names where the secret is (`${env:NAME}`, quoted or not): nothing to hide. */
function isReference(value: string): boolean {
  return /^(["']?)\$\{[^}]*\}\1$/.test(value.trim());
}

/** `*` for every character of `s` but line breaks: a masked value keeps its columns. */
function stars(s: string): string {
  return s.replace(/[^\n]/g, "*");
}

// scheme://user[:password]@ — the userinfo, whatever the scheme
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/@"'<>\\]+)@/gi;
// user:password@host without a scheme (a Kafka or PostgreSQL address written by hand)
export const BARE_USERINFO = /(^|[\s'"=,(\[{])([^\s@:/'"\\=,]+:[^\s@/'"\\]+)@(?=[A-Za-z0-9\[])/gm;
// KEY=value (env lists, query strings, JDBC properties)
const ASSIGNMENT = /\b([A-Za-z_][A-Za-z0-9_.-]*)=([^\s"',;&}\]\\]+)/g;
// YAML key: value, block or flow, the key bare or quoted, the value bare
export const YAML_PAIR =
  /(^|[\s{,-])(["']?)([A-Za-z0-9_.-]+)\2[ \t]*:[ \t]+([^\s,}#\\"'][^,}#\n\\]*?)(?=[ \t]*(?:[,}#\\]|$))/gm;
// key: "value" or key: 'value' — YAML or JSON, the value a whole quoted string (escapes kept)
const QUOTED_PAIR =
  /(^|[\s{,-])(["']?)([A-Za-z0-9_.-]+)\2[ \t]*:[ \t]*(?:"((?:[^"\\\n]|\\.)*)"|'((?:[^'\n]|'')*)')/gm;
// SQL: a sensitive column compared with a literal
const SQL_COMPARISON = /\b([A-Za-z_][A-Za-z0-9_]*)\s*(?:=|<>|!=)\s*'((?:[^']|'')*)'/g;
// a YAML map of environment values: every value is one
const ENV_KEY = /^(\s*)(?:-\s+)?(env|environment)\s*:\s*(.*)$/;

/**
 * Source text — a project file, a diagnostic's message — with every value that looks secret
 * replaced by `*`, character for character (line breaks kept, so a caret excerpt stays aligned):
 * the userinfo of a URL or of a `user:pass@host` address, the value of a `KEY=value` or YAML
 * `key: value` whose key looks secret ({@link isSensitiveKey}), a literal a SQL predicate
 * compares with such a column, and every value of an `env:` / `environment:` map.
 *
 * @example
 * ```ts
 * import { maskSecrets } from "./redact.ts";
 * maskSecrets("  sasl_password: hunter2"); // "  sasl_password: *******"
 * maskSecrets("bootstrap_host: app:pw@kafka:9092"); // "bootstrap_host: ******@kafka:9092"
 * ```
 */
export function maskSecrets(text: string): string {
  const pairs = text
    .replace(URL_USERINFO, (_m, scheme: string, info: string) => `${scheme}${stars(info)}@`)
    .replace(BARE_USERINFO, (_m, lead: string, info: string) => `${lead}${stars(info)}@`)
    .replace(
      ASSIGNMENT,
      (m, key: string, value: string) => isSensitiveKey(key) ? `${key}=${stars(value)}` : m,
    )
    .replace(
      YAML_PAIR,
      (m, _lead: string, _q: string, key: string, value: string) =>
        isSensitiveKey(key) && !isReference(value)
          ? m.slice(0, m.length - value.length) + stars(value)
          : m,
    );
  const masked = hideQuotedPairs(pairs, stars)
    .replace(
      SQL_COMPARISON,
      (m, column: string, literal: string) =>
        isSensitiveKey(column)
          ? m.slice(0, m.length - literal.length - 1) + stars(literal) + "'"
          : m,
    );
  return maskEnvMaps(masked);
}

/**
 * Every `key: "value"` / `key: 'value'` (YAML or JSON) whose key looks secret and whose value is
 * not a reference, with the value replaced by `hide(value)` inside its quotes — the one rule
 * {@link maskSecrets} (character for character) and the display's redaction (a placeholder) share.
 *
 * @example
 * ```ts
 * import { hideQuotedPairs } from "./secrets.ts";
 * hideQuotedPairs(`"api_token": "abc"`, () => "x"); // `"api_token": "x"`
 * ```
 */
export function hideQuotedPairs(text: string, hide: (value: string) => string): string {
  return text.replace(QUOTED_PAIR, (m, _lead, _q, key: string, dq?: string, sq?: string) => {
    const value = dq ?? sq ?? "";
    return isSensitiveKey(key) && !isReference(value)
      ? m.slice(0, m.length - value.length - 1) + hide(value) + m.slice(-1)
      : m;
  });
}

// a SQL string literal ('' is an escaped quote) and an identifier outside any literal
const SQL_LITERAL = /'((?:[^']|'')*)'/g;
const IDENTIFIER = /[A-Za-z_][A-Za-z0-9_]*/g;

/**
 * SQL text (a model file, a SQL diagnostic's message) with {@link maskSecrets}' rules and, when
 * it names a secret-looking identifier outside its literals, every string literal masked: a
 * literal anywhere in a predicate over such a column may be its value, whatever the operator,
 * the order or the line (`'x' = api_token`, `api_token IN (…)`, `api_token LIKE 'x%'`).
 *
 * @example
 * ```ts
 * import { maskSqlSecrets } from "./secrets.ts";
 * maskSqlSecrets("WHERE 'abc' = api_token"); // "WHERE '***' = api_token"
 * ```
 */
export function maskSqlSecrets(text: string): string {
  const masked = maskSecrets(text);
  const names = masked.replace(SQL_LITERAL, " ").match(IDENTIFIER) ?? [];
  if (!names.some(isSensitiveKey)) return masked;
  return masked.replace(SQL_LITERAL, (_m, body: string) => `'${stars(body)}'`);
}

/** Every value of an `env:` map, flow (`env: {A: b}`) or block (indented below `env:`). */
function maskEnvMaps(text: string): string {
  const lines = text.split("\n");
  let blockIndent: number | null = null;
  const pairValue = /^(\s*(?:-\s+)?["']?[A-Za-z0-9_.-]+["']?\s*[:=]\s*)(.*)$/;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const indent = line.length - line.trimStart().length;
    if (blockIndent !== null) {
      if (line.trim() === "" || indent > blockIndent) {
        const m = pairValue.exec(line) ?? /^(\s*-\s+)(.*)$/.exec(line);
        if (m) lines[i] = m[1] + stars(m[2]);
        continue;
      }
      blockIndent = null;
    }
    const env = ENV_KEY.exec(line);
    if (!env) continue;
    const rest = env[3];
    if (rest.trim() === "" || rest.trim().startsWith("#")) blockIndent = env[1].length;
    else {
      // flow map or list on the line: keep the punctuation and keys, mask the values
      const at = line.length - rest.length;
      lines[i] = line.slice(0, at) +
        rest.replace(
          /([{,\[]\s*)(?:(["']?[A-Za-z0-9_.-]+["']?\s*:\s*))?([^,}\]]*)/g,
          (_m, lead: string, key: string | undefined, value: string) =>
            `${lead}${key ?? ""}${stars(value)}`,
        );
    }
  }
  return lines.join("\n");
}

const REF = /^\$\{[^}]*\}$/;

/**
 * Where a configuration value written under a key that does not look secret still holds a
 * literal credential: the password of a URL's userinfo (`scheme://user:pw@`), or a `KEY=value`
 * whose key looks secret (a query string's `password=`, a JDBC property) — unless that part is
 * a reference (`${env:NAME}`). Returns what was found, or null.
 *
 * @example
 * ```ts
 * import { literalCredential } from "./secrets.ts";
 * literalCredential("postgres://u:pw@db/x"); // "the password of a URL"
 * literalCredential("postgres://u:${env:PW}@db/x"); // null
 * ```
 */
export function literalCredential(value: string): string | null {
  for (const m of value.matchAll(/\b[a-z][a-z0-9+.-]*:\/\/([^\s/@"'<>]+)@/gi)) {
    const colon = m[1].indexOf(":");
    const password = colon < 0 ? "" : m[1].slice(colon + 1);
    if (password !== "" && !REF.test(password)) return "the password of a URL";
  }
  for (const m of value.matchAll(/\b([A-Za-z_][A-Za-z0-9_.-]*)=([^\s"',;&}\]]+)/g)) {
    if (isSensitiveKey(m[1]) && !REF.test(m[2])) return `a ${m[1]}= value`;
  }
  return null;
}
