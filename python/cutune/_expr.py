"""Python expressions (Kernel Tuner restrictions and grid divisors) to the spec's C-like ones.

Kernel Tuner evaluates restrictions such as ``"block_size_x * tile <= 1024 and tile % 2 == 0"``
and grid divisors such as ``"block_size_x // 32"`` as Python over the tune parameters. A kernel
spec's expressions (docs/kernel-spec.md, "Expressions") are integer expressions with C operators,
which the engine checks while it enumerates the space, so large spaces never get listed in Python.

The translation goes through Python's own parser (ast), so precedence and chained comparisons
mean what Python says; every operator is emitted fully parenthesised, so C's precedence cannot
reinterpret it. Python and C disagree on a few operators' semantics: '/' is true division in
Python and truncating in C, '//' and '%' round differently for negative operands. So a translation
is only accepted after ``check`` has evaluated both readings -- Python's and C's -- on every
combination of the values of the parameters the expression reads, and found them equal. A
disagreement is an error naming a config where they differ, never a silently different space.
"""

import ast
import itertools

from ._errors import CutuneError

# The limit on value combinations that ``check`` enumerates for one expression (it only reads the
# parameters the expression names, usually one to three of them).
CHECK_LIMIT = 1_000_000

_FUNCTIONS = ("min", "max")

_BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "/", ast.Div: "/", ast.Mod: "%"}
_COMPARE = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}


class Untranslatable(Exception):
    """The expression uses something the spec's grammar cannot say; the text says what."""


class Undefined(Exception):
    """C evaluation hit a division by zero (the engine rejects such a config)."""


def parse(text, what):
    """The ast of a Python expression; CutuneError naming ``what`` when it does not parse."""
    if not isinstance(text, str):
        raise CutuneError("%s: expected a string, got %s" % (what, type(text).__name__))
    try:
        return ast.parse(text.strip(), mode="eval")
    except SyntaxError as e:
        raise CutuneError("%s %r is not a Python expression: %s" % (what, text, e.msg)) from None


def names(tree):
    """Every variable name the expression reads (function names excluded)."""
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in called}


def has_rounding(tree):
    """Whether it divides or takes a remainder: the operators whose meaning differs in C."""
    return any(isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Div, ast.FloorDiv, ast.Mod)) for n in ast.walk(tree))


def to_c(tree):
    """The spec expression text. Raises Untranslatable with the reason."""
    return _strip_outer(_c(tree.body))


def _strip_outer(text):
    # Every compound is parenthesised; the outermost pair says nothing and is dropped.
    if not (text.startswith("(") and text.endswith(")")):
        return text
    depth = 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and i < len(text) - 1:
            return text  # "(a) + (b)": the first '(' closes before the end
    return text[1:-1]


def _c(node):
    if isinstance(node, ast.Constant):
        v = node.value
        if isinstance(v, bool):
            return "1" if v else "0"
        if isinstance(v, int):
            return str(v)
        raise Untranslatable("the constant %r is not an integer (spec expressions are integer expressions)" % (v,))
    if isinstance(node, ast.Name):
        if node.id in ("True", "False"):  # only in very old Pythons; ast.Constant elsewhere
            return "1" if node.id == "True" else "0"
        return node.id
    if isinstance(node, ast.BoolOp):
        op = " && " if isinstance(node.op, ast.And) else " || "
        return "(" + op.join(_c(v) for v in node.values) + ")"
    if isinstance(node, ast.UnaryOp):
        if isinstance(node.op, ast.Not):
            return "(!" + _c(node.operand) + ")"
        if isinstance(node.op, ast.USub):
            return "(-" + _c(node.operand) + ")"
        if isinstance(node.op, ast.UAdd):
            return _c(node.operand)
        raise Untranslatable("the operator '~' has no counterpart in spec expressions")
    if isinstance(node, ast.BinOp):
        op = _BINARY.get(type(node.op))
        if op is None:
            symbol = {ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitAnd: "&", ast.BitOr: "|",
                      ast.BitXor: "^", ast.MatMult: "@"}.get(type(node.op), type(node.op).__name__)
            raise Untranslatable("the operator '%s' has no counterpart in spec expressions" % symbol)
        return "(" + _c(node.left) + " " + op + " " + _c(node.right) + ")"
    if isinstance(node, ast.Compare):
        parts = []
        left = node.left
        for op, right in zip(node.ops, node.comparators):
            parts.append(_compare(left, op, right))
            left = right
        return parts[0] if len(parts) == 1 else "(" + " && ".join(parts) + ")"
    if isinstance(node, ast.IfExp):
        return "(" + _c(node.test) + " ? " + _c(node.body) + " : " + _c(node.orelse) + ")"
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS and not node.keywords \
                and len(node.args) >= 2 and not any(isinstance(a, ast.Starred) for a in node.args):
            return node.func.id + "(" + ", ".join(_c(a) for a in node.args) + ")"
        raise Untranslatable("only min(a, b, ...) and max(a, b, ...) calls have counterparts in spec expressions")
    raise Untranslatable("%s has no counterpart in spec expressions" % type(node).__name__)


def _compare(left, op, right):
    if isinstance(op, (ast.In, ast.NotIn)):
        # x in (1, 2, 4) -> ((x == 1) || (x == 2) || (x == 4)); only literal lists, tuples, sets.
        if not isinstance(right, (ast.Tuple, ast.List, ast.Set)):
            raise Untranslatable("'in' needs a literal list or tuple on its right")
        eq, join, empty = ("==", " || ", "0") if isinstance(op, ast.In) else ("!=", " && ", "1")
        if not right.elts:
            return empty
        x = _c(left)
        terms = ["(" + x + " " + eq + " " + _c(e) + ")" for e in right.elts]
        return terms[0] if len(terms) == 1 else "(" + join.join(terms) + ")"
    symbol = _COMPARE.get(type(op))
    if symbol is None:
        raise Untranslatable("the comparison '%s' has no counterpart in spec expressions"
                             % ("is" if isinstance(op, ast.Is) else "is not"))
    return "(" + _c(left) + " " + symbol + " " + _c(right) + ")"


def c_eval(tree, env):
    """The value the engine computes for the translated expression (C semantics, integers)."""
    return _ce(tree.body, env)


def _truncating_division(a, b):
    if b == 0:
        raise Undefined()
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _ce(node, env):
    if isinstance(node, ast.Constant):
        return int(node.value)
    if isinstance(node, ast.Name):
        if node.id in ("True", "False"):
            return int(node.id == "True")
        return int(env[node.id])
    if isinstance(node, ast.BoolOp):
        if isinstance(node.op, ast.And):
            return int(all(_ce(v, env) != 0 for v in node.values))  # all() short-circuits like &&
        return int(any(_ce(v, env) != 0 for v in node.values))
    if isinstance(node, ast.UnaryOp):
        v = _ce(node.operand, env)
        if isinstance(node.op, ast.Not):
            return int(v == 0)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp):
        a, b = _ce(node.left, env), _ce(node.right, env)
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
        if isinstance(node.op, ast.Mult):
            return a * b
        if isinstance(node.op, (ast.Div, ast.FloorDiv)):
            return _truncating_division(a, b)
        return a - b * _truncating_division(a, b)  # C's %: the sign of the dividend
    if isinstance(node, ast.Compare):
        left = _ce(node.left, env)
        for op, right_node in zip(node.ops, node.comparators):
            if isinstance(op, (ast.In, ast.NotIn)):
                found = any(left == _ce(e, env) for e in right_node.elts)
                if found != isinstance(op, ast.In):
                    return 0
                continue
            right = _ce(right_node, env)
            ok = {ast.Eq: left == right, ast.NotEq: left != right, ast.Lt: left < right, ast.LtE: left <= right,
                  ast.Gt: left > right, ast.GtE: left >= right}[type(op)]
            if not ok:
                return 0
            left = right
        return 1
    if isinstance(node, ast.IfExp):
        return _ce(node.body, env) if _ce(node.test, env) != 0 else _ce(node.orelse, env)
    if isinstance(node, ast.Call):
        args = [_ce(a, env) for a in node.args]
        return min(args) if node.func.id == "min" else max(args)
    raise AssertionError("c_eval of an untranslated node")


def py_eval(tree, env):
    """What Kernel Tuner computes: the expression evaluated as Python over the parameter values."""
    return eval(compile(tree, "<expression>", "eval"), {"__builtins__": __builtins__}, dict(env))


def check(tree, text, params, what, reading):
    """Raises CutuneError when the C reading of ``tree`` differs from Python's on some values.

    ``params``: name -> list of values for every name the expression reads. ``reading``: how a
    Python value compares with a C one: "truth" (restrictions: both true or both false) or "int"
    (grid divisors and sizes: Kernel Tuner takes int() of the Python value).
    """
    used = sorted(names(tree))
    combos = 1
    for name in used:
        combos *= len(params[name])
    if combos > CHECK_LIMIT:
        if has_rounding(tree):
            raise CutuneError("%s %r divides, and its %d value combinations are too many to check that C's integer "
                              "division gives what Python's gives; pass it as a Python function instead"
                              % (what, text, combos))
        return  # + - * comparisons and logic mean the same in both on integers
    for values in itertools.product(*(params[name] for name in used)):
        env = dict(zip(used, values))
        try:
            py = py_eval(tree, env)
            py_value = bool(py) if reading == "truth" else int(py)
        except ZeroDivisionError:
            py_value = None
        try:
            c = c_eval(tree, env)
            c_value = (c != 0) if reading == "truth" else c
        except Undefined:
            c_value = None
        if reading == "truth":
            # A division by zero rejects the config in the engine; treat Python's the same way.
            py_value = bool(py_value)
            c_value = bool(c_value)
        if py_value != c_value:
            where = ", ".join("%s=%s" % (k, v) for k, v in env.items())
            raise CutuneError("%s %r means something else as a cutune expression (%s): at %s Python gives %s and "
                              "cutune %s (cutune divides integers, truncating toward zero); rewrite it so that both "
                              "agree, or pass a Python function" % (what, text, to_c(tree), where, py_value, c_value))
