/**
 * Redaction for display. What people and logs see never holds a secret:
 *
 * - values of object fields whose name looks secret (`token`, `password`, `secret`, ...,
 *   case-insensitive) become `<redacted>`; so do the literals a predicate compares with such a
 *   column (`api_token = '...'`);
 * - credentials inside connection strings (`scheme://user:pass@host`, `user:pass@host`) become
 *   `<redacted>`;
 * - in source text (a diagnostic's excerpt and message), every such value is masked character
 *   for character ({@link maskSecrets});
 * - environment values (`KEY=value`) are shown as a keyed hash ({@link envFingerprint}): equal
 *   values compare equal within one process, and the hash cannot be reversed or matched against
 *   a guess outside it because its key is random and never leaves the process.
 *
 * Redaction is for what people see only; checksums (a plan's seal, a typed action's sha256) are
 * always computed over the full, unredacted content.
 *
 * @example
 * ```ts
 * import { redactForDisplay, redactText } from "./redact.ts";
 * console.log(redactForDisplay({ user: "a", api_token: "xyz" }));
 * // { user: "a", api_token: "<redacted>" }
 * console.log(redactText("postgres://app:pw@db:5432/x")); // postgres://<redacted>@db:5432/x
 * ```
 * @module
 */
import { createHmac } from "node:crypto";
import { BARE_USERINFO, hideQuotedPairs, isSensitiveKey, YAML_PAIR } from "../secrets.ts";

export { isSensitiveKey, maskSecrets, SENSITIVE_FRAGMENTS } from "../secrets.ts";

/** The placeholder written instead of a redacted value. */
export const REDACTED = "<redacted>";

/**
 * A deep copy of `value` with sensitive fields' values replaced by {@link REDACTED}, literals
 * compared with a sensitive column hidden, and credentials in connection strings removed.
 * The input is not modified. Null values stay null (nothing to hide).
 * @example
 * ```ts
 * redactForDisplay({ password: "p", user: "u" }); // { password: "<redacted>", user: "u" }
 * ```
 */
export function redactForDisplay<T>(value: T): T {
  return redact(value) as T;
}

/**
 * Free text with connection-string credentials and sensitive `KEY=value` assignments removed
 * (the last line of defence of every CLI output and of the probes' evidence files).
 * @example
 * ```ts
 * redactText("DB_PASSWORD=hunter2 url=https://u:p@h/x"); // "DB_PASSWORD=<redacted> url=https://<redacted>@h/x"
 * ```
 */
export function redactText(
  text: string,
  /** What it may leave alone. */
  options: {
    /**
     * Hide a `user:password@host` written without a scheme (default true). Text that names fault
     * sites (`journal.intent:before@1`, the harness's own markers in evidence) would lose them to
     * this rule; such text turns it off and keeps every other rule.
     */
    bareUserinfo?: boolean;
  } = {},
): string {
  text = text
    // scheme://user[:password]@ — the user part may be a secret too (tokens as user names)
    .replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@"'<>]+@/gi, `$1${REDACTED}@`)
    // KEY=value where KEY looks secret (env lists, command lines, messages)
    .replace(
      /\b([A-Za-z_][A-Za-z0-9_]*)=([^\s"',;}\]]+)/g,
      (whole, key: string) => isSensitiveKey(key) ? `${key}=${REDACTED}` : whole,
    )
    // user:password@host written without a scheme
    .replace(
      BARE_USERINFO,
      (m, lead: string) => options.bareUserinfo === false ? m : `${lead}${REDACTED}@`,
    )
    // a YAML `key: value` (a source excerpt) whose key looks secret
    .replace(
      YAML_PAIR,
      (m, _lead: string, _q: string, key: string, value: string) =>
        isSensitiveKey(key) && !NOTHING_TO_HIDE.test(value)
          ? m.slice(0, m.length - value.length) +
            (JSON_NUMBER.test(value) ? `"${REDACTED}"` : REDACTED)
          : m,
    );
  // `"key": "value"` (JSON, or quoted YAML): hidden inside its quotes, so JSON stays JSON
  return hideQuotedPairs(text, () => REDACTED);
}

// a bare value that hides nothing (JSON's and YAML's null and booleans): kept, so JSON stays JSON
const NOTHING_TO_HIDE = /^(?:null|true|false|~)$/;
// a bare number: replaced by a quoted placeholder, so JSON stays JSON
const JSON_NUMBER = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** The per-process key of {@link envFingerprint}: random, never written anywhere. */
const DISPLAY_KEY = crypto.getRandomValues(new Uint8Array(32));

/**
 * A keyed hash of a value for display and comparison: `hmac:<16 hex>`. Stable within one
 * process (two equal values give the same text), meaningless outside it.
 * @example
 * ```ts
 * keyedHash("s3cr3t") === keyedHash("s3cr3t"); // true
 * ```
 */
export function keyedHash(value: string): string {
  return `hmac:${createHmac("sha256", DISPLAY_KEY).update(value).digest("hex").slice(0, 16)}`;
}

/**
 * An environment entry `KEY=value` with its value replaced by {@link keyedHash}: the name stays
 * readable, the value never leaves the process.
 * @example
 * ```ts
 * envFingerprint("API_TOKEN=s3cr3t"); // "API_TOKEN=hmac:…"
 * ```
 */
export function envFingerprint(entry: string): string {
  const eq = entry.indexOf("=");
  if (eq < 0) return entry; // a bare name carries no value
  return `${entry.slice(0, eq)}=${keyedHash(entry.slice(eq + 1))}`;
}

const COMPARISONS = new Set(["compare", "in", "between"]);

function redact(value: unknown): unknown {
  if (typeof value === "string") return redactText(value);
  if (Array.isArray(value)) return value.map(redact);
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>;
    if (typeof record.kind === "string" && COMPARISONS.has(record.kind) && comparesSecret(record)) {
      return hideLiterals(record);
    }
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(record)) {
      out[key] = isSensitiveKey(key) && v !== null ? REDACTED : redact(v);
    }
    return out;
  }
  return value;
}

/** A predicate comparison node with a column operand whose name looks secret. */
function comparesSecret(node: Record<string, unknown>): boolean {
  return ["left", "right", "arg", "low", "high"].some((k) => {
    const operand = node[k] as { kind?: unknown; name?: unknown } | undefined;
    return operand?.kind === "column" && typeof operand.name === "string" &&
      isSensitiveKey(operand.name);
  });
}

function hideLiterals(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(hideLiterals);
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(record)) {
      out[key] = record.kind === "literal" && key === "value" && v !== null
        ? REDACTED
        : hideLiterals(v);
    }
    return out;
  }
  return value;
}

/** What {@link redactText} may leave alone. */
export type RedactTextOptions = NonNullable<Parameters<typeof redactText>[1]>;
