/**
 * Just enough ustar to move one small file through Docker's archive API.
 * @module
 */
import { Buffer } from "node:buffer";

const BLOCK = 512;

/** The contents of the first regular file in a tar archive, or `null` if there is none. */
export function untarSingleFile(tar: Uint8Array): Uint8Array | null {
  let off = 0;
  while (off + BLOCK <= tar.length) {
    const header = tar.subarray(off, off + BLOCK);
    if (header.every((b) => b === 0)) return null;
    const size = parseInt(ascii(header.subarray(124, 136)).trim() || "0", 8);
    const type = String.fromCharCode(header[156] || 48); // NUL means a regular file
    off += BLOCK;
    if (type === "0") return new Uint8Array(tar.subarray(off, off + size));
    off += Math.ceil(size / BLOCK) * BLOCK;
  }
  return null;
}

/** A tar archive holding one regular file `name` (mode 0644 unless given, owned by root). */
export function tarSingleFile(name: string, data: Uint8Array, mode = 0o644): Buffer {
  const header = Buffer.alloc(BLOCK, 0);
  header.write(name, 0, 100, "utf8");
  header.write(mode.toString(8).padStart(7, "0") + "\0", 100, "ascii");
  header.write("0000000\0", 108, "ascii");
  header.write("0000000\0", 116, "ascii");
  header.write(data.length.toString(8).padStart(11, "0") + "\0", 124, "ascii");
  header.write(Math.floor(Date.now() / 1000).toString(8).padStart(11, "0") + "\0", 136, "ascii");
  header.write("        ", 148, "ascii"); // checksum is computed with this field as spaces
  header.write("0", 156, "ascii");
  header.write("ustar\0" + "00", 257, "ascii");
  let sum = 0;
  for (const b of header) sum += b;
  header.write(sum.toString(8).padStart(6, "0") + "\0 ", 148, "ascii");
  const padded = Buffer.alloc(Math.ceil(data.length / BLOCK) * BLOCK, 0);
  padded.set(data);
  return Buffer.concat([header, padded, Buffer.alloc(BLOCK * 2, 0)]);
}

function ascii(b: Uint8Array): string {
  return new TextDecoder("ascii").decode(b).replace(/\0.*$/s, "");
}
