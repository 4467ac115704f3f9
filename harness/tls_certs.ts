/**
 * A throw-away PKI made with openssl at test time: a CA, a server certificate for `localhost`
 * and 127.0.0.1 (or the hosts given), a client certificate, and a second CA that signed
 * nothing (what "an untrusted CA" looks like to a client). The client's files follow the Docker
 * CLI's names (`ca.pem`, `cert.pem`, `key.pem` in one directory: a `DOCKER_CERT_PATH`).
 *
 * @example
 * ```ts
 * import { makeTestPki } from "./tls_certs.ts";
 * // const pki = await makeTestPki({ clientName: "sluice" });
 * // await Deno.readTextFile(pki.caFile);
 * // await pki.remove();
 * ```
 * @module
 */

/** The files of a {@link makeTestPki} PKI (PEM, every one). */
export interface TestPki {
  /** The directory holding every file. */
  dir: string;
  /** The CA that signed the server and client certificates. */
  caFile: string;
  /** Another CA, which signed nothing here. */
  otherCaFile: string;
  serverCertFile: string;
  serverKeyFile: string;
  /** The client certificate (`cert.pem`), its key (`key.pem`) beside `ca.pem`. */
  clientCertFile: string;
  clientKeyFile: string;
  /** Remove the directory. */
  remove(): Promise<void>;
}

/** What {@link makeTestPki} makes. */
export interface TestPkiOptions {
  /** The client certificate's CN (default `sluice`). */
  clientName?: string;
  /**
   * The host names and IP addresses the server certificate is for (default `localhost` and
   * 127.0.0.1); leave one out to see a client refuse a server reached by that name.
   */
  serverHosts?: string[];
}

/** Run `openssl ARGS` in `dir`; throws with its stderr when it fails. */
export async function openssl(dir: string, args: string[]): Promise<void> {
  const out = await new Deno.Command("openssl", {
    args,
    cwd: dir,
    stdout: "piped",
    stderr: "piped",
  })
    .output();
  if (!out.success) {
    throw new Error(`openssl ${args[0]} failed: ${new TextDecoder().decode(out.stderr)}`);
  }
}

/** A self-signed CA `CN=<cn>` in `dir`: `<name>.pem` and its key `<name>.key`, for two days. */
export async function selfSignedCa(dir: string, name: string, cn: string): Promise<void> {
  await openssl(dir, [
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.pem`,
    "-days",
    "2",
    "-subj",
    `/CN=${cn}`,
  ]);
}

/**
 * A certificate `CN=<cn>` in `dir`: `<name>.pem` and its key `<name>.key` (PKCS#8), for two days,
 * signed by the CA `<ca>.pem`/`<ca>.key` of `dir` (default `ca`), with the extensions `ext`
 * (openssl's `-extfile` lines; none when null).
 */
export async function signed(
  dir: string,
  name: string,
  cn: string,
  ext: string | null,
  ca = "ca",
): Promise<void> {
  await openssl(dir, [
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.csr`,
    "-subj",
    `/CN=${cn}`,
  ]);
  if (ext !== null) await Deno.writeTextFile(`${dir}/${name}.ext`, ext);
  await openssl(dir, [
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    `${ca}.pem`,
    "-CAkey",
    `${ca}.key`,
    "-CAcreateserial",
    "-out",
    `${name}.pem`,
    "-days",
    "2",
    ...(ext !== null ? ["-extfile", `${name}.ext`] : []),
  ]);
}

/** Make a CA, a server and a client certificate, and an unrelated CA, in a new directory. */
export async function makeTestPki(options: TestPkiOptions = {}): Promise<TestPki> {
  const dir = await Deno.makeTempDir({ prefix: "sluice-pki-" });
  await selfSignedCa(dir, "ca", "sluice-test-ca");
  await selfSignedCa(dir, "other-ca", "sluice-other-ca");
  const hosts = options.serverHosts ?? ["localhost", "127.0.0.1"];
  const names = hosts.map((h) => /^[0-9.]+$|:/.test(h) ? `IP:${h}` : `DNS:${h}`);
  await signed(
    dir,
    "server",
    hosts[0],
    `subjectAltName=${names.join(",")}\nextendedKeyUsage=serverAuth\n`,
  );
  // the Docker CLI's client file names
  await signed(dir, "cert", options.clientName ?? "sluice", "extendedKeyUsage=clientAuth\n");
  await Deno.rename(`${dir}/cert.key`, `${dir}/key.pem`);
  return {
    dir,
    caFile: `${dir}/ca.pem`,
    otherCaFile: `${dir}/other-ca.pem`,
    serverCertFile: `${dir}/server.pem`,
    serverKeyFile: `${dir}/server.key`,
    clientCertFile: `${dir}/cert.pem`,
    clientKeyFile: `${dir}/key.pem`,
    remove: () => Deno.remove(dir, { recursive: true }).catch(() => {}),
  };
}
