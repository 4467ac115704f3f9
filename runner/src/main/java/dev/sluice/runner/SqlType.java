package dev.sluice.runner;

/** The column and literal types of docs/artifact-format.md. {@code NULL} is only a literal type. */
public enum SqlType {
  STRING,
  BOOLEAN,
  BIGINT,
  DOUBLE,
  NULL;

  /** The type named in an artifact, or null when the name is unknown. */
  public static SqlType byName(String name, boolean allowNull) {
    for (SqlType t : values()) {
      if (t.name().equals(name) && (allowNull || t != NULL)) return t;
    }
    return null;
  }
}
