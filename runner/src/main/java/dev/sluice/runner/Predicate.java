package dev.sluice.runner;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A compiled predicate AST (docs/artifact-format.md, "Predicate AST"), evaluated with SQL
 * three-valued logic: {@link #eval} returns TRUE, FALSE or null (UNKNOWN). A record passes only
 * on TRUE. Compilation type-checks the tree against the schema; a malformed tree is a plan error.
 */
public abstract class Predicate {
  /** The static type of this node (BOOLEAN for every logical node). */
  public final SqlType type;

  private Predicate(SqlType type) {
    this.type = type;
  }

  /** Evaluates against a decoded row. Logical nodes return Boolean or null (UNKNOWN). */
  public abstract Object eval(Object[] row);

  /** True only when the predicate is TRUE for the row (UNKNOWN and FALSE drop it). */
  public boolean passes(Object[] row) {
    return Boolean.TRUE.equals(eval(row));
  }

  /** The predicate that passes every record (a model without WHERE: {@code "predicate": null}). */
  public static Predicate alwaysTrue() {
    return new Literal(SqlType.BOOLEAN, Boolean.TRUE);
  }

  // --------------------------------------------------------------------------------------------
  // Compilation from the AST

  /** Thrown when an AST is invalid; the plan loader maps it to exit 10. */
  public static final class InvalidAst extends Exception {
    public final String reason;

    InvalidAst(String reason, String detail) {
      super(detail);
      this.reason = reason;
    }
  }

  private static final Pattern BIGINT_LITERAL = Pattern.compile("-?(0|[1-9][0-9]*)");
  private static final Pattern DOUBLE_LITERAL =
      Pattern.compile("-?(0|[1-9][0-9]*)(\\.[0-9]+)?(e[+-][0-9]+)?");

  /** Compiles a boolean-typed AST against the schema. */
  public static Predicate compile(Object ast, List<Field> schema) throws InvalidAst {
    Predicate p = node(ast, schema, "predicate");
    requireBoolean(p, "predicate");
    return p;
  }

  private static void requireBoolean(Predicate p, String path) throws InvalidAst {
    if (p.type != SqlType.BOOLEAN && p.type != SqlType.NULL) {
      throw new InvalidAst("PLAN_PREDICATE_TYPE", path + " has type " + p.type + ", BOOLEAN expected");
    }
  }

  private static Map<?, ?> fields(Object ast, String path, String... names) throws InvalidAst {
    if (!(ast instanceof Map<?, ?> m)) throw new InvalidAst("PLAN_WRONG_TYPE", path + " must be an object");
    Set<String> allowed = Set.of(names);
    for (Object k : m.keySet()) {
      if (!k.equals("kind") && !allowed.contains(k)) {
        throw new InvalidAst("PLAN_UNKNOWN_FIELD", path + "." + k + " is not a field of " + m.get("kind"));
      }
    }
    for (String n : names) {
      if (!m.containsKey(n)) throw new InvalidAst("PLAN_MISSING_FIELD", path + "." + n + " is missing");
    }
    return m;
  }

  private static String str(Map<?, ?> m, String key, String path) throws InvalidAst {
    if (!(m.get(key) instanceof String s)) throw new InvalidAst("PLAN_WRONG_TYPE", path + "." + key + " must be a string");
    return s;
  }

  private static boolean bool(Map<?, ?> m, String key, String path) throws InvalidAst {
    if (!(m.get(key) instanceof Boolean b)) throw new InvalidAst("PLAN_WRONG_TYPE", path + "." + key + " must be a boolean");
    return b;
  }

  private static List<?> list(Map<?, ?> m, String key, String path, int min) throws InvalidAst {
    if (!(m.get(key) instanceof List<?> l)) throw new InvalidAst("PLAN_WRONG_TYPE", path + "." + key + " must be an array");
    if (l.size() < min) throw new InvalidAst("PLAN_PREDICATE_INVALID", path + "." + key + " needs at least " + min + " elements");
    return l;
  }

  private static Predicate node(Object ast, List<Field> schema, String path) throws InvalidAst {
    if (!(ast instanceof Map<?, ?> m)) throw new InvalidAst("PLAN_WRONG_TYPE", path + " must be an object");
    if (!(m.get("kind") instanceof String kind)) throw new InvalidAst("PLAN_WRONG_TYPE", path + ".kind must be a string");
    switch (kind) {
      case "column": {
        fields(ast, path, "name", "type");
        String name = str(m, "name", path);
        SqlType t = SqlType.byName(str(m, "type", path), false);
        for (int i = 0; i < schema.size(); i++) {
          if (schema.get(i).name().equals(name)) {
            if (schema.get(i).type() != t) {
              throw new InvalidAst("PLAN_PREDICATE_TYPE", path + ": column '" + name + "' is " + schema.get(i).type() + " in the schema");
            }
            return new Column(i, t);
          }
        }
        throw new InvalidAst("PLAN_PREDICATE_INVALID", path + ": column '" + name + "' is not in the schema");
      }
      case "literal":
        fields(ast, path, "type", "value");
        return literal(m, path);
      case "compare": {
        fields(ast, path, "op", "left", "right");
        String op = str(m, "op", path);
        if (!Set.of("=", "<>", "<", "<=", ">", ">=").contains(op)) {
          throw new InvalidAst("PLAN_PREDICATE_INVALID", path + ": unknown operator '" + op + "'");
        }
        Predicate l = node(m.get("left"), schema, path + ".left");
        Predicate r = node(m.get("right"), schema, path + ".right");
        SqlType t = common(l.type, r.type, path);
        return new Compare(op, l, r, t);
      }
      case "and":
      case "or": {
        fields(ast, path, "args");
        List<?> args = list(m, "args", path, 2);
        List<Predicate> ps = new ArrayList<>();
        for (int i = 0; i < args.size(); i++) {
          Predicate p = node(args.get(i), schema, path + ".args[" + i + "]");
          requireBoolean(p, path + ".args[" + i + "]");
          ps.add(p);
        }
        return kind.equals("and") ? new And(ps) : new Or(ps);
      }
      case "not": {
        fields(ast, path, "arg");
        Predicate p = node(m.get("arg"), schema, path + ".arg");
        requireBoolean(p, path + ".arg");
        return new Not(p);
      }
      case "is_null": {
        fields(ast, path, "arg", "negated");
        return new IsNull(node(m.get("arg"), schema, path + ".arg"), bool(m, "negated", path));
      }
      case "in": {
        fields(ast, path, "arg", "list", "negated");
        Predicate arg = node(m.get("arg"), schema, path + ".arg");
        List<?> items = list(m, "list", path, 1);
        List<Predicate> lits = new ArrayList<>();
        SqlType t = arg.type;
        for (int i = 0; i < items.size(); i++) {
          String p = path + ".list[" + i + "]";
          Predicate lit = node(items.get(i), schema, p);
          if (!(lit instanceof Literal)) throw new InvalidAst("PLAN_PREDICATE_INVALID", p + " must be a literal");
          t = common(t, lit.type, p);
          lits.add(lit);
        }
        return new In(arg, lits, bool(m, "negated", path), t);
      }
      case "between": {
        fields(ast, path, "arg", "low", "high", "negated");
        Predicate arg = node(m.get("arg"), schema, path + ".arg");
        Predicate low = node(m.get("low"), schema, path + ".low");
        Predicate high = node(m.get("high"), schema, path + ".high");
        SqlType t = common(common(arg.type, low.type, path), high.type, path);
        boolean negated = bool(m, "negated", path);
        Predicate between = new And(List.of(new Compare(">=", arg, low, t), new Compare("<=", arg, high, t)));
        return negated ? new Not(between) : between;
      }
      default:
        throw new InvalidAst("PLAN_PREDICATE_INVALID", path + ": unknown kind '" + kind + "'");
    }
  }

  private static SqlType common(SqlType a, SqlType b, String path) throws InvalidAst {
    if (a == null || b == null) throw new InvalidAst("PLAN_PREDICATE_TYPE", path + ": unknown type");
    if (a == SqlType.NULL) return b;
    if (b == SqlType.NULL || a == b) return a;
    throw new InvalidAst("PLAN_PREDICATE_TYPE", path + ": cannot compare " + a + " with " + b);
  }

  private static Predicate literal(Map<?, ?> m, String path) throws InvalidAst {
    if (!(m.get("type") instanceof String tn)) throw new InvalidAst("PLAN_WRONG_TYPE", path + ".type must be a string");
    SqlType t = SqlType.byName(tn, true);
    if (t == null) throw new InvalidAst("PLAN_PREDICATE_INVALID", path + ": unknown type '" + tn + "'");
    Object v = m.get("value");
    switch (t) {
      case NULL:
        if (v != Json.NULL) throw new InvalidAst("PLAN_WRONG_TYPE", path + ".value must be null");
        return new Literal(t, null);
      case BOOLEAN:
        if (!(v instanceof Boolean b)) throw new InvalidAst("PLAN_WRONG_TYPE", path + ".value must be a boolean");
        return new Literal(t, b);
      case STRING:
        if (!(v instanceof String s)) throw new InvalidAst("PLAN_WRONG_TYPE", path + ".value must be a string");
        return new Literal(t, s);
      case BIGINT: {
        if (!(v instanceof String s)) throw new InvalidAst("PLAN_WRONG_TYPE", path + ".value must be a string of digits");
        if (!BIGINT_LITERAL.matcher(s).matches() || s.equals("-0")) {
          throw new InvalidAst("PLAN_PREDICATE_INVALID", path + ": '" + s + "' is not a canonical BIGINT literal");
        }
        BigInteger b = new BigInteger(s);
        if (b.bitLength() > 63) throw new InvalidAst("PLAN_PREDICATE_INVALID", path + ": " + s + " is outside BIGINT");
        return new Literal(t, b.longValueExact());
      }
      case DOUBLE: {
        if (!(v instanceof String s)) throw new InvalidAst("PLAN_WRONG_TYPE", path + ".value must be a string");
        if (!DOUBLE_LITERAL.matcher(s).matches()) {
          throw new InvalidAst("PLAN_PREDICATE_INVALID", path + ": '" + s + "' is not a DOUBLE literal");
        }
        double d = Double.parseDouble(s);
        if (Double.isInfinite(d) || !Values.jsNumber(d).equals(s)) {
          throw new InvalidAst("PLAN_PREDICATE_INVALID", path + ": '" + s + "' is not the shortest round-trip form");
        }
        return new Literal(t, d);
      }
      default:
        throw new AssertionError(t);
    }
  }

  // --------------------------------------------------------------------------------------------
  // Nodes

  static final class Column extends Predicate {
    final int index;

    Column(int index, SqlType type) {
      super(type);
      this.index = index;
    }

    @Override
    public Object eval(Object[] row) {
      return row[index];
    }
  }

  static final class Literal extends Predicate {
    final Object value;

    Literal(SqlType type, Object value) {
      super(type);
      this.value = value;
    }

    @Override
    public Object eval(Object[] row) {
      return value;
    }
  }

  static final class Compare extends Predicate {
    final int op;
    final Predicate left;
    final Predicate right;
    final SqlType operandType;

    Compare(String op, Predicate left, Predicate right, SqlType operandType) {
      super(SqlType.BOOLEAN);
      this.op = opCode(op);
      this.left = left;
      this.right = right;
      this.operandType = operandType;
    }

    @Override
    public Object eval(Object[] row) {
      Object a = left.eval(row);
      Object b = right.eval(row);
      if (a == null || b == null) return null;
      return compare(op, a, b);
    }
  }

  static final int EQ = 0;
  static final int NE = 1;
  static final int LT = 2;
  static final int LE = 3;
  static final int GT = 4;
  static final int GE = 5;

  /** The operator's code, resolved once at compile time rather than per record. */
  static int opCode(String op) {
    return switch (op) {
      case "=" -> EQ;
      case "<>" -> NE;
      case "<" -> LT;
      case "<=" -> LE;
      case ">" -> GT;
      case ">=" -> GE;
      default -> throw new IllegalArgumentException(op);
    };
  }

  /** Applies a comparison operator to two non-null values of the same type. */
  static boolean compare(String op, Object a, Object b) {
    return compare(opCode(op), a, b);
  }

  /** Applies a comparison operator (its code) to two non-null values of the same type. */
  static boolean compare(int op, Object a, Object b) {
    if (a instanceof Double x && b instanceof Double y) {
      // IEEE 754: primitive operators (-0.0 == 0.0); NaN cannot occur
      double p = x;
      double q = y;
      return switch (op) {
        case EQ -> p == q;
        case NE -> p != q;
        case LT -> p < q;
        case LE -> p <= q;
        case GT -> p > q;
        default -> p >= q;
      };
    }
    int c;
    if (a instanceof Long x && b instanceof Long y) c = Long.compare(x, y);
    else if (a instanceof String x && b instanceof String y) c = Values.compareCodePoints(x, y);
    else if (a instanceof Boolean x && b instanceof Boolean y) c = Boolean.compare(x, y);
    else throw new IllegalStateException("incomparable values " + a + " and " + b);
    return switch (op) {
      case EQ -> c == 0;
      case NE -> c != 0;
      case LT -> c < 0;
      case LE -> c <= 0;
      case GT -> c > 0;
      default -> c >= 0;
    };
  }

  static final class And extends Predicate {
    final Predicate[] args;

    And(List<Predicate> args) {
      super(SqlType.BOOLEAN);
      this.args = args.toArray(new Predicate[0]);
    }

    @Override
    public Object eval(Object[] row) {
      boolean unknown = false;
      for (int i = 0; i < args.length; i++) {
        Object v = args[i].eval(row);
        if (Boolean.FALSE.equals(v)) return Boolean.FALSE;
        if (v == null) unknown = true;
      }
      return unknown ? null : Boolean.TRUE;
    }
  }

  static final class Or extends Predicate {
    final Predicate[] args;

    Or(List<Predicate> args) {
      super(SqlType.BOOLEAN);
      this.args = args.toArray(new Predicate[0]);
    }

    @Override
    public Object eval(Object[] row) {
      boolean unknown = false;
      for (int i = 0; i < args.length; i++) {
        Object v = args[i].eval(row);
        if (Boolean.TRUE.equals(v)) return Boolean.TRUE;
        if (v == null) unknown = true;
      }
      return unknown ? null : Boolean.FALSE;
    }
  }

  static final class Not extends Predicate {
    final Predicate arg;

    Not(Predicate arg) {
      super(SqlType.BOOLEAN);
      this.arg = arg;
    }

    @Override
    public Object eval(Object[] row) {
      Object v = arg.eval(row);
      return v == null ? null : !((Boolean) v);
    }
  }

  static final class IsNull extends Predicate {
    final Predicate arg;
    final boolean negated;

    IsNull(Predicate arg, boolean negated) {
      super(SqlType.BOOLEAN);
      this.arg = arg;
      this.negated = negated;
    }

    @Override
    public Object eval(Object[] row) {
      return (arg.eval(row) == null) != negated;
    }
  }

  static final class In extends Predicate {
    final Predicate arg;
    final Predicate[] list;
    final boolean negated;

    In(Predicate arg, List<Predicate> list, boolean negated, SqlType operandType) {
      super(SqlType.BOOLEAN);
      this.arg = arg;
      this.list = list.toArray(new Predicate[0]);
      this.negated = negated;
    }

    @Override
    public Object eval(Object[] row) {
      Object x = arg.eval(row);
      Boolean result = x == null ? null : Boolean.FALSE;
      if (x != null) {
        for (int i = 0; i < list.length; i++) {
          Object l = list[i].eval(row);
          if (l == null) {
            result = null;
          } else if (compare(EQ, x, l)) {
            result = Boolean.TRUE;
            break;
          }
        }
      }
      if (result == null) return null;
      return result != negated;
    }
  }
}
