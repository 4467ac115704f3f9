package dev.sluice.runner;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The shared vectors file tests/vectors/predicates.json (read relative to runner/). */
final class Vectors {
  private Vectors() {}

  static final Path PATH = Path.of("..", "tests", "vectors", "predicates.json");

  static Map<?, ?> load() throws Exception {
    Json.Parsed p = Json.parse(Files.readAllBytes(PATH));
    if (p.duplicateKey() != null) throw new IllegalStateException("duplicate key in vectors: " + p.duplicateKey());
    return (Map<?, ?>) p.value();
  }

  static List<Field> schema(Map<?, ?> vectors) {
    List<Field> fields = new ArrayList<>();
    for (Object o : (List<?>) vectors.get("schema")) {
      Map<?, ?> f = (Map<?, ?>) o;
      fields.add(new Field((String) f.get("name"), SqlType.byName((String) f.get("type"), false), (Boolean) f.get("nullable")));
    }
    return fields;
  }
}
