/**
 * The project's inputs on disk, read as hostile input: a project may come from a pull request,
 * and nothing read from it may escape the project, block, grow without bound or print what it
 * points at. Every file sluice reads from a project directory (`sluice.yaml`, the SQL models)
 * goes through {@link diskFiles}, the working-tree twin of the Git revision reader
 * (`lib/review/journey.ts`, `lib/providers/git`):
 *
 * - the path is relative and stays inside the project (`PROJECT_INPUT_OUTSIDE`);
 * - no component of it is a symbolic link (`PROJECT_SYMLINK_INPUT`) — the project directory
 *   itself may be one: it is the user's choice, resolved once;
 * - the file is a regular file (`PROJECT_INPUT_NOT_REGULAR`: a FIFO would block the read, a
 *   device never end) with one link (`PROJECT_HARDLINK_INPUT`: a second name may be a file
 *   outside the project);
 * - at most {@link INPUT_LIMITS}`.maxBytes` bytes are read, whatever its size claims
 *   (`PROJECT_INPUT_TOO_LARGE`), and it is UTF-8 text (`PROJECT_INVALID`).
 *
 * A refused input's content is never read, so no error can print it.
 *
 * @example
 * ```ts
 * import { diskFiles } from "./files.ts";
 * const files = diskFiles(".");
 * const manifest = await files.read("sluice.yaml"); // null when there is none
 * console.log(manifest === null ? "not a project" : files.name("sluice.yaml"));
 * ```
 * @module
 */
import { join, resolve } from "node:path";
import { SluiceError } from "../errors.ts";

/** A source of project files, by path relative to the project directory (`/`-separated). */
export interface ProjectFiles {
  /** The file's text, or null when there is no such file. */
  read(path: string): Promise<string | null>;
  /** How diagnostics name the file (a path, or `REF:path` for a Git revision). */
  name(path: string): string;
  /**
   * What an absent manifest means here and what to do, after "<manifest> not found: " (default:
   * the working tree's "not a sluice project (create one with 'sluice init')").
   */
  noProject?: string;
}

/** The bound on one project input: 16 MiB, the bound of one Git call of the revision reader. */
export const INPUT_LIMITS = { maxBytes: 16 * 1024 * 1024 } as const;

/**
 * The components of a project-relative path, or an error naming it when it is absolute or
 * leaves the project.
 */
function components(path: string, shown: string): string[] {
  const parts = path.split("/").filter((p) => p !== "" && p !== ".");
  if (path.startsWith("/") || parts.length === 0 || parts.includes("..")) {
    throw new SluiceError(
      "PROJECT_INPUT_OUTSIDE",
      `${shown}: a project input must be a path inside the project directory`,
      { evidence: { path } },
    );
  }
  return parts;
}

/**
 * The project directory on disk, read under the rules of this module.
 *
 * @example
 * ```ts
 * import { diskFiles } from "./files.ts";
 * const text = await diskFiles("examples/orders").read("models/eligible_orders.sql");
 * ```
 */
export function diskFiles(
  dir: string,
  limits: { maxBytes: number } = INPUT_LIMITS,
): ProjectFiles {
  const name = (path: string) => join(dir, path);
  let root: Promise<string> | undefined;
  return {
    name,
    async read(path) {
      const shown = name(path);
      const parts = components(path, shown);
      // the directory itself may be a link the user chose; below it, nothing is followed
      root ??= Deno.realPath(dir).catch(() => resolve(dir));
      let at = await root;
      let info: Deno.FileInfo | null = null;
      for (const [i, part] of parts.entries()) {
        at = join(at, part);
        try {
          info = await Deno.lstat(at);
        } catch (e) {
          if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory) {
            return null;
          }
          throw e;
        }
        if (info.isSymlink) {
          const which = parts.slice(0, i + 1).join("/");
          throw new SluiceError(
            "PROJECT_SYMLINK_INPUT",
            `${
              name(which)
            } is a symbolic link; a project input must be a regular file inside the project, read without following links (reading ${shown})`,
            { evidence: { path: which } },
          );
        }
        if (i < parts.length - 1 && !info.isDirectory) return null;
      }
      if (!info) return null;
      if (info.isDirectory) return null; // a directory named like the file: no such file
      if (!info.isFile) {
        throw new SluiceError(
          "PROJECT_INPUT_NOT_REGULAR",
          `${shown} is not a regular file (a FIFO, socket or device); a project input must be one`,
          { evidence: { path } },
        );
      }
      if (info.nlink !== null && info.nlink > 1) {
        throw new SluiceError(
          "PROJECT_HARDLINK_INPUT",
          `${shown} has ${info.nlink} hard links; a project input must have one (another name may be a file outside the project)`,
          { evidence: { path, links: info.nlink } },
        );
      }
      const tooLarge = (bytes: string) =>
        new SluiceError(
          "PROJECT_INPUT_TOO_LARGE",
          `${shown} is ${bytes} bytes, over the ${limits.maxBytes}-byte bound of a project input`,
          { evidence: { path, max_bytes: limits.maxBytes } },
        );
      if (info.size > limits.maxBytes) throw tooLarge(String(info.size));
      const file = await Deno.open(at, { read: true });
      try {
        // the file opened is the file checked (nothing swapped in between)
        const opened = await file.stat();
        if (!opened.isFile || opened.ino !== info.ino || opened.dev !== info.dev) {
          throw new SluiceError(
            "PROJECT_INPUT_NOT_REGULAR",
            `${shown} changed while it was read; a project input must stay one regular file`,
            { evidence: { path } },
          );
        }
        // read at most one byte past the bound, whatever the size claimed
        const buf = new Uint8Array(limits.maxBytes + 1);
        let got = 0;
        while (got < buf.length) {
          const n = await file.read(buf.subarray(got));
          if (n === null) break;
          got += n;
        }
        if (got > limits.maxBytes) throw tooLarge(`more than ${limits.maxBytes}`);
        try {
          return new TextDecoder("utf-8", { fatal: true }).decode(buf.subarray(0, got));
        } catch {
          throw new SluiceError("PROJECT_INVALID", `${shown} is not UTF-8 text`, {
            evidence: { path },
          });
        }
      } finally {
        file.close();
      }
    },
  };
}
