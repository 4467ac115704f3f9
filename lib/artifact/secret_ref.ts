/**
 * Secret references in connector configuration values: `${env:NAME}` stands for the value of
 * the environment variable `NAME` in the process that plans or applies. A value may hold several
 * references and literal text around them (`jdbc:postgresql://db/app?password=${env:DB_PW}`).
 * The value of a variable is never written anywhere; artifacts keep the reference and a keyed
 * digest of the value (see `connector.ts`).
 *
 * Any other `${...}` is refused rather than passed on, so that a typo never reaches a worker as
 * literal text and a worker-side config provider is never triggered by accident.
 *
 * @example
 * ```ts
 * import { parseSecretRefs, substituteSecretRefs } from "./secret_ref.ts";
 * const refs = parseSecretRefs("user=app;pw=${env:DB_PW}");
 * console.log(refs); // { refs: [{ variable: "DB_PW", start: 11, end: 24 }], problem: null }
 * console.log(substituteSecretRefs("pw=${env:DB_PW}", (v) => v === "DB_PW" ? "x" : undefined));
 * ```
 * @module
 */

/** One reference inside a value: the variable and its character offsets in the value. */
export interface SecretRef {
  variable: string;
  start: number;
  end: number;
}

/** The result of scanning a value: its references, or the first malformed one. */
export interface SecretRefScan {
  refs: SecretRef[];
  /** Why the value is malformed, with the offset of the offending `${`; null when it is not. */
  problem: { message: string; start: number; end: number } | null;
}

const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Find the `${env:NAME}` references in a value.
 *
 * @example
 * ```ts
 * parseSecretRefs("${env:A}-${env:B}").refs.map((r) => r.variable); // ["A", "B"]
 * parseSecretRefs("${file:/x:y}").problem?.message; // only ${env:NAME} references ...
 * ```
 */
export function parseSecretRefs(value: string): SecretRefScan {
  const refs: SecretRef[] = [];
  let at = 0;
  while (true) {
    const start = value.indexOf("${", at);
    if (start < 0) return { refs, problem: null };
    const close = value.indexOf("}", start + 2);
    if (close < 0) {
      return {
        refs,
        problem: {
          message: "unterminated '${': a secret reference is ${env:NAME}",
          start,
          end: value.length,
        },
      };
    }
    const inner = value.slice(start + 2, close);
    const m = /^env:(.*)$/.exec(inner);
    if (!m) {
      return {
        refs,
        problem: {
          message:
            `only \${env:NAME} references are supported, found '\${${inner}}' (sluice resolves secrets from its own environment)`,
          start,
          end: close + 1,
        },
      };
    }
    if (!VARIABLE.test(m[1])) {
      return {
        refs,
        problem: {
          message: `'${m[1]}' is not an environment variable name ([A-Za-z_][A-Za-z0-9_]*)`,
          start,
          end: close + 1,
        },
      };
    }
    refs.push({ variable: m[1], start, end: close + 1 });
    at = close + 1;
  }
}

/**
 * Replace each reference by its variable's value. Returns the resolved value, or the names of
 * the variables that are unset. The value must be well-formed (see {@link parseSecretRefs}).
 *
 * @example
 * ```ts
 * substituteSecretRefs("a${env:X}b", () => "1"); // { value: "a1b", unset: [] }
 * ```
 */
export function substituteSecretRefs(
  value: string,
  lookup: (variable: string) => string | undefined,
): { value: string; unset: string[] } {
  const { refs } = parseSecretRefs(value);
  const unset: string[] = [];
  let out = "";
  let at = 0;
  for (const r of refs) {
    const v = lookup(r.variable);
    if (v === undefined) unset.push(r.variable);
    out += value.slice(at, r.start) + (v ?? "");
    at = r.end;
  }
  return { value: out + value.slice(at), unset };
}
