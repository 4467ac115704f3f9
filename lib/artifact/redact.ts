/**
 * Redaction for display: values of object fields whose name contains `token`, `password`
 * or `secret` (case-insensitive) are replaced by a placeholder. Redaction is for what
 * people see only; checksums are always computed over the full, unredacted content.
 *
 * @example
 * ```ts
 * import { redactForDisplay } from "./redact.ts";
 * console.log(redactForDisplay({ user: "a", api_token: "xyz" }));
 * // { user: "a", api_token: "<redacted>" }
 * ```
 * @module
 */

/** The placeholder written instead of a redacted value. */
export const REDACTED = "<redacted>";

/** Field-name fragments whose values are hidden (case-insensitive substring match). */
export const SENSITIVE_FRAGMENTS: readonly string[] = ["token", "password", "secret"];

/** Whether a field name is sensitive. */
export function isSensitiveKey(key: string): boolean {
  const lower = key.toLowerCase();
  return SENSITIVE_FRAGMENTS.some((f) => lower.includes(f));
}

/**
 * A deep copy of `value` with sensitive fields' values replaced by {@link REDACTED}.
 * The input is not modified. Null values stay null (nothing to hide).
 * @example
 * ```ts
 * redactForDisplay({ password: "p", user: "u" }); // { password: "<redacted>", user: "u" }
 * ```
 */
export function redactForDisplay<T>(value: T): T {
  return redact(value) as T;
}

function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
      out[key] = isSensitiveKey(key) && v !== null ? REDACTED : redact(v);
    }
    return out;
  }
  return value;
}
