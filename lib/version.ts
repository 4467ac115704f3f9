/** sluice's own version, printed by `sluice --version` and recorded in evidence files. */
export const SLUICE_VERSION = "0.1.0";
