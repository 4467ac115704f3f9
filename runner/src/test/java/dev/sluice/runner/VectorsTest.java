package dev.sluice.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/** Every case of the shared vectors, evaluated by the runner's decoder and predicate. */
class VectorsTest {
  @TestFactory
  List<DynamicTest> predicateCasesGiveTheExpectedThreeValuedResult() throws Exception {
    Map<?, ?> v = Vectors.load();
    List<Field> schema = Vectors.schema(v);
    RecordDecoder decoder = new RecordDecoder(schema);
    List<DynamicTest> tests = new ArrayList<>();
    for (Object o : (List<?>) v.get("predicates")) {
      Map<?, ?> p = (Map<?, ?>) o;
      Predicate predicate = Predicate.compile(p.get("ast"), schema);
      List<?> cases = (List<?>) p.get("cases");
      for (int i = 0; i < cases.size(); i++) {
        Map<?, ?> c = (Map<?, ?>) cases.get(i);
        String record = (String) c.get("record");
        Object expected = c.get("expected") == Json.NULL ? null : c.get("expected");
        tests.add(dynamicTest(p.get("name") + " [" + i + "] " + p.get("sql"), () -> {
          Object[] row = decoder.decode(record.getBytes(StandardCharsets.UTF_8));
          assertEquals(expected, predicate.eval(row), record);
          assertEquals(Boolean.TRUE.equals(expected), predicate.passes(row));
        }));
      }
    }
    return tests;
  }

  @TestFactory
  List<DynamicTest> decodeRejectsGiveTheStableCode() throws Exception {
    Map<?, ?> v = Vectors.load();
    RecordDecoder decoder = new RecordDecoder(Vectors.schema(v));
    List<DynamicTest> tests = new ArrayList<>();
    for (Object o : (List<?>) v.get("decode_rejects")) {
      Map<?, ?> c = (Map<?, ?>) o;
      tests.add(dynamicTest("reject: " + c.get("name"), () -> {
        DecodeException e = assertThrows(DecodeException.class,
            () -> decoder.decode(((String) c.get("record")).getBytes(StandardCharsets.UTF_8)));
        assertEquals(c.get("error"), e.code, e.getMessage());
      }));
    }
    return tests;
  }

  @TestFactory
  List<DynamicTest> decodeAcceptsDecode() throws Exception {
    Map<?, ?> v = Vectors.load();
    RecordDecoder decoder = new RecordDecoder(Vectors.schema(v));
    List<DynamicTest> tests = new ArrayList<>();
    for (Object o : (List<?>) v.get("decode_accepts")) {
      Map<?, ?> c = (Map<?, ?>) o;
      tests.add(dynamicTest("accept: " + c.get("name"), () -> {
        Object[] row = decoder.decode(((String) c.get("record")).getBytes(StandardCharsets.UTF_8));
        assertEquals(6, row.length);
      }));
    }
    return tests;
  }
}
