/**
 * Private: the stored body of a document, canonical JSON of `{document, revision, sha256}`,
 * where `sha256` is the checksum of the document's canonical JSON.
 * @module
 */
import { SluiceError } from "../errors.ts";
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

const CORRUPT: Record<DocName, string> = {
  ownership: "STATE_CORRUPT_OWNERSHIP",
  control: "STATE_CORRUPT_JOURNAL",
  history: "STATE_CORRUPT_HISTORY",
};

/** Encode a document at a revision. */
export function encodeBody(document: unknown, revision: number): string {
  return canonicalJson({ document, revision, sha256: checksumOf(document) });
}

/** Decode and verify a stored body; a truncated or edited body is STATE_CORRUPT_*. */
export function decodeBody<T>(name: DocName, body: string, where: string): StoredDoc<T> {
  const code = CORRUPT[name];
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (e) {
    throw new SluiceError(
      code,
      `${where}: ${name} is not valid JSON (truncated or edited): ${(e as Error).message}`,
      { evidence: { document: name, where, length: body.length } },
    );
  }
  const p = parsed as { document?: unknown; revision?: unknown; sha256?: unknown };
  if (
    typeof p !== "object" || p === null || p.document === undefined ||
    typeof p.revision !== "number" || !Number.isSafeInteger(p.revision) || p.revision < 1 ||
    typeof p.sha256 !== "string"
  ) {
    throw new SluiceError(code, `${where}: ${name} lacks document/revision/sha256`, {
      evidence: { document: name, where },
    });
  }
  const actual = checksumOf(p.document);
  if (actual !== p.sha256) {
    throw new SluiceError(
      code,
      `${where}: ${name} checksum mismatch (recorded ${p.sha256}, content hashes to ${actual})`,
      { evidence: { document: name, where, recorded: p.sha256, actual } },
    );
  }
  if (canonicalJson(parsed) !== body) {
    throw new SluiceError(code, `${where}: ${name} is not in canonical form (edited by hand?)`, {
      evidence: { document: name, where },
    });
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
