/**
 * Private: the stored body of a document, canonical JSON of
 * `{document, revision, sha256, revision_sha256}`, where `sha256` is the checksum of the
 * document's canonical JSON and `revision_sha256` the checksum of `{revision, sha256}`: every
 * byte of the body is covered.
 * @module
 */
import { type ErrorCode, SluiceError } from "../errors.ts";
import { canonicalJson, checksumOf, sha256Hex } from "./_canonical.ts";
import type { DocName } from "./primitive.ts";

/** A decoded stored body. */
export interface StoredDoc<T> {
  document: T;
  revision: number;
  /** sha256 of the document's canonical JSON (the state checksum for ownership). */
  checksum: string;
  /** sha256 of the whole stored body (what compare-and-set compares). */
  bodySha256: string;
}

/** The corruption code of each document. */
export const CORRUPT: Record<DocName, ErrorCode> = {
  ownership: "STATE_CORRUPT_OWNERSHIP",
  control: "STATE_CORRUPT_JOURNAL",
  history: "STATE_CORRUPT_HISTORY",
};

/** The digest sealing a body's revision to its document checksum. */
function revisionSeal(revision: number, sha256: string): string {
  return checksumOf({ revision, sha256 });
}

/** Encode a document at a revision. */
export function encodeBody(document: unknown, revision: number): string {
  const sha256 = checksumOf(document);
  return canonicalJson({
    document,
    revision,
    sha256,
    revision_sha256: revisionSeal(revision, sha256),
  });
}

/** The STATE_CORRUPT_* error of a stored document, naming the document and the field. */
export function corruptDoc(
  name: DocName,
  where: string,
  field: string,
  message: string,
  evidence: Record<string, unknown> = {},
): SluiceError {
  return new SluiceError(CORRUPT[name], `${where}: ${name} ${field}: ${message}`, {
    evidence: { document: name, where, field, ...evidence },
  });
}

const BODY_KEYS = ["document", "revision", "revision_sha256", "sha256"];

/**
 * Decode and verify a stored body; a truncated or edited body is STATE_CORRUPT_* naming the
 * field: `document` (its content does not hash to `sha256`), `revision` (it does not match
 * `revision_sha256`), or the envelope itself.
 */
export function decodeBody<T>(name: DocName, body: string, where: string): StoredDoc<T> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (e) {
    throw corruptDoc(
      name,
      where,
      "body",
      `is not valid JSON (truncated or edited): ${(e as Error).message}`,
      { length: body.length },
    );
  }
  const p = parsed as Record<string, unknown>;
  if (typeof p !== "object" || p === null || Array.isArray(p)) {
    throw corruptDoc(name, where, "body", "is not a stored body object");
  }
  const keys = Object.keys(p).sort();
  if (keys.join(",") !== BODY_KEYS.join(",")) {
    throw corruptDoc(
      name,
      where,
      "body",
      `has fields ${keys.join(", ")}; expected ${BODY_KEYS.join(", ")}`,
    );
  }
  if (typeof p.sha256 !== "string" || typeof p.revision_sha256 !== "string") {
    throw corruptDoc(name, where, "sha256", "is not a string");
  }
  const actual = checksumOf(p.document);
  if (actual !== p.sha256) {
    throw corruptDoc(
      name,
      where,
      "document",
      `checksum mismatch (recorded ${p.sha256}, content hashes to ${actual})`,
      { recorded: p.sha256, actual },
    );
  }
  if (typeof p.revision !== "number" || !Number.isSafeInteger(p.revision) || p.revision < 1) {
    throw corruptDoc(name, where, "revision", `${JSON.stringify(p.revision)} is not a revision`);
  }
  const sealed = revisionSeal(p.revision, p.sha256);
  if (sealed !== p.revision_sha256) {
    throw corruptDoc(
      name,
      where,
      "revision",
      `revision ${p.revision} does not match its seal revision_sha256 (recorded ${p.revision_sha256}, expected ${sealed})`,
      { recorded: p.revision_sha256, actual: sealed },
    );
  }
  if (canonicalJson(parsed) !== body) {
    throw corruptDoc(name, where, "body", "is not in canonical form (edited by hand?)");
  }
  return {
    document: p.document as T,
    revision: p.revision,
    checksum: actual,
    bodySha256: sha256Hex(body),
  };
}

/** The revision recorded in a body, or -1 when it cannot be read (for conflict messages). */
export function revisionOfBody(body: string | null): number {
  if (body === null) return 0;
  try {
    const r = (JSON.parse(body) as { revision?: unknown }).revision;
    return typeof r === "number" ? r : -1;
  } catch {
    return -1;
  }
}

/** The STATE_CONFLICT error for a compare-and-set that lost (shared by both backends). */
export function conflictError(
  name: DocName,
  expectedRevision: number,
  actualBody: string | null,
): SluiceError {
  const actual = revisionOfBody(actualBody);
  const show = (r: number) => r === 0 ? "absent" : r < 0 ? "unreadable" : `revision ${r}`;
  return new SluiceError(
    "STATE_CONFLICT",
    `state ${name} changed concurrently: expected ${show(expectedRevision)}, found ${show(actual)}`,
    {
      evidence: {
        document: name,
        expected_revision: expectedRevision,
        actual_revision: actual,
        actual_sha256: actualBody === null ? null : sha256Hex(actualBody),
      },
    },
  );
}
