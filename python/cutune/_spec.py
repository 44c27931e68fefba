"""Kernel Tuner-style arguments -> a cutune kernel spec (docs/kernel-spec.md).

``build_spec`` is a pure function of the arguments: it returns a ``Spec`` holding the TOML text,
the CUDA source as cutune will compile it, and the arrays to write as ``.npy`` files, and touches
neither the disk nor a GPU, so every decision here is unit-tested on a CPU (tests/python).
``Spec.write(folder)`` puts the files in a folder for ``tune --kernel-file``.

How Kernel Tuner's model maps onto a spec:

- the family is ``kernel_name``; the problem is ``problem_size``, as three extent fields
  problem_size_x/_y/_z (y and z default to 1 and stay out of the problem key at 1, so that
  ``10000`` and ``(10000, 1)`` are the same problem, as they are the same launch);
- each tune parameter is an axis: integer lists as values, anything else (floats, strings, bools)
  as values holding ``str(value)``, which is what Kernel Tuner writes after ``#define name``
  (a spec axis whose values are texts passes the text itself as the definition);
- each array argument is a buffer ``arg<i>`` filled from ``arg<i>.npy``; each scalar a typed
  literal argument; outputs (non-None entries of ``answer``) are verified against
  ``answer<i>.npy``;
- the launch is one step: block dims from ``block_size_names`` (a name that is no tune parameter
  takes Kernel Tuner's default, 256 for x and 1 for y and z, and is #defined in the source as
  Kernel Tuner does), grid dims ceil_div(problem_size_d, product of the grid divisors);
- string restrictions and grid divisors are translated to spec expressions (see _expr); Python
  functions, and strings that read a labelled (non-integer) parameter, are evaluated here over
  the whole space and the survivors listed in ``allowed_configs``.
"""

import itertools
import math
import os
import re

import numpy as np

from . import _expr
from . import _toml
from ._errors import CutuneError

# Kernel Tuner's defaults (kernel_tuner.util.get_thread_block_dimensions).
DEFAULT_BLOCK_SIZE_NAMES = ("block_size_x", "block_size_y", "block_size_z")
DEFAULT_BLOCK_DIMS = (256, 1, 1)
DIMS = ("x", "y", "z")
PROBLEM_FIELDS = tuple("problem_size_" + d for d in DIMS)

# A callable restriction, or a string one that reads a non-integer parameter, is evaluated in
# Python over every combination of the tune parameters; beyond this many, refuse rather than hang.
MAX_PYTHON_COMBINATIONS = 1_000_000

# numpy dtype -> the spec's type names. Buffers take the first five; scalars also uint64.
_BUFFER_TYPES = {("i", 4): "int32", ("u", 4): "uint32", ("i", 8): "int64", ("f", 4): "float32", ("f", 8): "float64"}
_SCALAR_TYPES = {**_BUFFER_TYPES, ("u", 8): "uint64"}

# Names a tune parameter cannot take. Kernel Tuner forbids grid_size_* and time; the rest would
# collide with what the spec, the engine's constraint names or the result dicts already use.
_DEVICE_LIMIT_NAMES = ("max_threads_per_block", "max_shared_per_block", "max_shared_per_block_optin",
                       "max_registers_per_block", "sm_count", "cc_major", "cc_minor")
RESULT_KEYS = ("time", "times", "compile_time", "verification_time", "benchmark_time", "GB/s", "GFLOP/s",
               "timestamp", "cutune")
_RESERVED = set(("grid_size_x", "grid_size_y", "grid_size_z", "kernel_tuner", "ceil_div", "min", "max", "sizeof")
                + PROBLEM_FIELDS + _DEVICE_LIMIT_NAMES + RESULT_KEYS)
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_BUFFER_NAME = re.compile(r"^arg[0-9]+$")


def is_identifier(name):
    """An identifier as cutune reads them (ASCII: a letter or '_', then letters, digits, '_')."""
    return isinstance(name, str) and bool(_IDENTIFIER.match(name))


class Param:
    """One tune parameter: its values as the user gave them and as the spec writes them."""

    def __init__(self, name, values):
        self.name = name
        self.values = list(values)
        # Integer lists become value axes; anything else a labelled axis whose labels are the
        # values' text (Kernel Tuner's "#define name <str(value)>").
        self.labelled = not all(_is_int(v) for v in self.values)
        self.texts = [str(v) if self.labelled else str(int(v)) for v in self.values]
        self.by_text = dict(zip(self.texts, self.values))

    def text_of(self, value):
        return str(value) if self.labelled else str(int(value))


class Spec:
    """What ``Spec.write`` puts in a folder, plus what reading the results back needs."""

    def __init__(self):
        self.family = ""
        self.toml = ""
        self.source = ""            # the CUDA source as written next to the spec
        self.spec_name = ""         # "<family>.toml"
        self.source_name = ""       # "<family>.cu"
        self.arrays = {}            # file name -> numpy array (C order, little-endian)
        self.allowed = None         # lines of allowed_configs, or None
        self.problem_text = ""      # "problem_size_x=4096,problem_size_y=4096"
        self.problem_key = ""       # the database's key for it (defaults left out)
        self.problem_size = ()      # the dims as given
        self.params = []            # [Param], in axis order
        self.verified = False       # whether any output is checked against an answer
        self.filters = []           # predicates over a {name: value} dict (every restriction)

    def param(self, name):
        for p in self.params:
            if p.name == name:
                return p
        return None

    def accepts(self, values):
        """Whether the config (name -> value as the user gave it) passes every restriction."""
        return all(f(values) for f in self.filters)

    def write(self, folder):
        """Writes the spec, its source, arrays and allowed list into ``folder``; the spec's path."""
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, self.source_name), "w", encoding="utf-8") as f:
            f.write(self.source)
        for name, array in self.arrays.items():
            np.save(os.path.join(folder, name), array, allow_pickle=False)
        if self.allowed is not None:
            with open(os.path.join(folder, "allowed.txt"), "w", encoding="utf-8") as f:
                f.write("".join(line + "\n" for line in self.allowed))
        path = os.path.join(folder, self.spec_name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.toml)
        return path


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


# ---- kernel source ------------------------------------------------------------------------------

def _looks_like_a_filename(text):
    # Kernel Tuner's heuristic (util.looks_like_a_filename), narrowed to CUDA file names.
    return (len(text) <= 250 and "\n" not in text and not any(c in text for c in "();{}\\")
            and text.strip().endswith((".cu", ".cuh", ".c", ".cpp", ".cc", ".h", ".hpp")))


def read_source(kernel_source):
    """(code, include folder): Kernel Tuner accepts CUDA code or the name of a file holding it."""
    if isinstance(kernel_source, os.PathLike):
        path = os.fspath(kernel_source)
    elif isinstance(kernel_source, str):
        if "\n" not in kernel_source and len(kernel_source) < 4096 and os.path.isfile(kernel_source):
            path = kernel_source
        elif _looks_like_a_filename(kernel_source):
            raise CutuneError("kernel_source %r looks like a file name, but there is no such file" % kernel_source)
        else:
            return kernel_source, os.getcwd()
    elif callable(kernel_source):
        raise CutuneError("kernel_source: code generator functions are not supported; pass CUDA code or a file name")
    elif isinstance(kernel_source, (list, tuple)):
        raise CutuneError("kernel_source: lists of files are not supported; pass the kernel's file (it may #include "
                          "files beside it)")
    else:
        raise CutuneError("kernel_source must be CUDA code or a file name, not %s" % type(kernel_source).__name__)
    try:
        with open(path, "r", encoding="utf-8") as f:
            return f.read(), os.path.dirname(os.path.abspath(path))
    except OSError as e:
        raise CutuneError("kernel_source %r cannot be read: %s" % (path, e.strerror or e)) from None


# ---- numbers as spec and CUDA text --------------------------------------------------------------

def _decimal(value, what):
    """A finite float as positional decimal text that reads back as exactly this double."""
    value = float(value)
    if not math.isfinite(value):
        raise CutuneError("%s is %r; cutune passes finite numbers only" % (what, value))
    # unique=True: the shortest digits that identify the double; positional: no exponent, so any
    # decimal-literal parser reads it. A float32 value is first widened to the double it equals,
    # so the text is exact whether the reader parses it as float or as double then narrows.
    return np.format_float_positional(value, unique=True, trim="0")


def _scalar_text(kind, value, what):
    if kind in ("float32", "float64"):
        return _decimal(value, what)
    return str(int(value))


def _cuda_literal(dtype, value, what):
    """One element of a __constant__ initialiser, typed so that it converts without narrowing."""
    kind, size = dtype.kind, dtype.itemsize
    if kind == "b":
        return "true" if value else "false"
    if kind == "f" and size in (4, 8):
        f = float(value)
        if not math.isfinite(f):
            raise CutuneError("%s holds %r; only finite values can be written as CUDA constants" % (what, f))
        # repr: the shortest text of the double equal to the value; a float32 value's double is
        # exact, so "…f" rounds back to it.
        return repr(f) + ("f" if size == 4 else "")
    if kind in "iu" and size <= 8:
        v = int(value)
        suffix = {("i", 8): "LL", ("u", 4): "u", ("u", 8): "ULL"}.get((kind, size), "")
        if kind == "i" and v == -(1 << (8 * size - 1)) and size >= 4:
            # "-2147483648" is unary minus on a literal that does not fit an int.
            return "(%d%s - 1)" % (v + 1, suffix)
        return "%d%s" % (v, suffix)
    raise CutuneError("%s has dtype %s; constant memory values must be booleans, integers, float32 or float64"
                      % (what, dtype))


# ---- the pieces ---------------------------------------------------------------------------------

def _problem_dims(problem_size):
    if _is_int(problem_size):
        dims = [problem_size]
    elif isinstance(problem_size, (list, tuple)):
        dims = list(problem_size)
    elif isinstance(problem_size, str) or callable(problem_size):
        raise CutuneError("problem_size: expressions and functions of the tune parameters are not supported; "
                          "give an int or a tuple of up to 3 ints")
    else:
        raise CutuneError("problem_size must be an int or a tuple of up to 3 ints, not %s" % type(problem_size).__name__)
    if not 1 <= len(dims) <= 3:
        raise CutuneError("problem_size must have 1 to 3 dimensions, not %d" % len(dims))
    for d in dims:
        if not _is_int(d):
            raise CutuneError("problem_size: %r is not an int (expressions of tune parameters are not supported)" % (d,))
        if int(d) < 1:
            raise CutuneError("problem_size: every dimension must be at least 1, not %d" % int(d))
    return [int(d) for d in dims]


def _params(tune_params, buffer_count):
    if not isinstance(tune_params, dict) or not tune_params:
        raise CutuneError("tune_params must be a non-empty dict of parameter name -> list of values")
    params = []
    for name, values in tune_params.items():
        if not is_identifier(name):
            raise CutuneError("tune parameter %r: names must be identifiers (they become #define names)" % (name,))
        if name in _RESERVED or (_BUFFER_NAME.match(name) and int(name[3:]) < buffer_count):
            raise CutuneError("tune parameter %r: the name is reserved (Kernel Tuner or cutune uses it)" % name)
        if "loop_unroll_factor" in name:
            raise CutuneError("tune parameter %r: Kernel Tuner's special handling of loop_unroll_factor parameters "
                              "(a constexpr; 0 removes the #pragma unroll) is not supported" % name)
        if isinstance(values, np.ndarray):
            values = list(values)
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            raise CutuneError("tune parameter %r: expected a list of values, got %s" % (name, type(values).__name__))
        values = list(values)
        if not values:
            raise CutuneError("tune parameter %r has no values" % name)
        p = Param(name, values)
        for v, text in zip(p.values, p.texts):
            if p.labelled and (not text or any(c in text for c in ",=\n\r") or text != text.strip()):
                raise CutuneError("tune parameter %r: the value %r cannot be passed as a definition (its text must be "
                                  "non-empty, without ',' '=' line breaks or surrounding spaces)" % (name, v))
            if not p.labelled and not -(1 << 63) <= int(v) < (1 << 63):
                raise CutuneError("tune parameter %r: %d does not fit in 64 bits" % (name, int(v)))
        if len(set(p.texts)) != len(p.texts):
            raise CutuneError("tune parameter %r lists a value twice: %r" % (name, values))
        params.append(p)
    return params


def _block_dims(block_size_names, params):
    names = list(DEFAULT_BLOCK_SIZE_NAMES)
    if block_size_names is not None:
        if not isinstance(block_size_names, (list, tuple)) or len(block_size_names) > 3 \
                or not all(isinstance(n, str) for n in block_size_names):
            raise CutuneError("block_size_names must be a list of at most 3 names")
        names[:len(block_size_names)] = list(block_size_names)
    by_name = {p.name: p for p in params}
    exprs, defines = [], []
    for d, name in enumerate(names):
        if not is_identifier(name):
            raise CutuneError("block_size_names: %r is not an identifier" % name)
        if name in by_name:
            if by_name[name].labelled:
                raise CutuneError("tune parameter %r is a block dimension, so its values must be integers" % name)
            exprs.append(name)
        else:
            # Kernel Tuner launches with its default and still #defines the name.
            exprs.append(str(DEFAULT_BLOCK_DIMS[d]))
            defines.append((name, DEFAULT_BLOCK_DIMS[d]))
    return names, exprs, defines


def _int_params_for(tree, params, what, text):
    """name -> values for the parameters an expression reads; CutuneError for unknown names."""
    by_name = {p.name: p for p in params}
    used = {}
    for name in _expr.names(tree):
        if name in ("True", "False"):
            continue
        if name not in by_name:
            raise CutuneError("%s %r reads %r, which is not a tune parameter" % (what, text, name))
        used[name] = by_name[name]
    return used


def _translated(text, params, what, reading):
    """A Python expression over integer tune parameters as checked spec expression text."""
    tree = _expr.parse(text, what)
    used = _int_params_for(tree, params, what, text)
    for p in used.values():
        if p.labelled:
            raise CutuneError("%s %r reads %r, whose values are not integers" % (what, text, p.name))
    try:
        c = _expr.to_c(tree)
    except _expr.Untranslatable as e:
        raise CutuneError("%s %r cannot be translated: %s" % (what, text, e)) from None
    _expr.check(tree, text, {n: p.values for n, p in used.items()}, what, reading)
    return c


def _divisor(item, params, what):
    """One grid divisor entry (int, expression text or a nested list) as spec text, or None for 1."""
    if _is_int(item):
        return None if int(item) == 1 else str(int(item))
    if isinstance(item, str):
        text = _translated(item, params, what, "int")
        if text == "1":
            return None
        # Parenthesised unless atomic: the entries are multiplied, and "a * b / 2" is not "a * (b / 2)".
        return text if re.match(r"^\w+$", text) else "(" + text + ")"
    if callable(item):
        raise CutuneError("%s: functions are not supported; give parameter names or expressions as strings" % what)
    if isinstance(item, (list, tuple)):
        parts = [p for p in (_divisor(i, params, what) for i in item) if p is not None]
        return " * ".join(parts) if parts else None
    raise CutuneError("%s: %r is neither an int, an expression string nor a list" % (what, item))


def _grid(grid_divs, block_names, params, problem_fields):
    by_name = {p.name: p for p in params}
    exprs, divisors = [], []
    for d, div in enumerate(grid_divs):
        what = "grid_div_" + DIMS[d]
        if div is None:
            # Kernel Tuner: the block size name when it is a tune parameter, else 1.
            div = [block_names[d]] if block_names[d] in by_name else []
        text = _divisor(div, params, what)
        divisors.append(text)
        field = problem_fields[d]
        exprs.append(field if text is None else "ceil_div(%s, %s)" % (field, text))
    return exprs, divisors


def _restrictions(restrictions, params):
    """(spec constraints, Python predicates for allowed_configs, predicates for reading results)."""
    if restrictions is None:
        return [], [], []
    if callable(restrictions):
        # Kernel Tuner calls a single restriction function with the dict of parameter values.
        f = restrictions
        return [], [lambda p: bool(f(dict(p)))], [lambda p: bool(f(dict(p)))]
    if isinstance(restrictions, str):
        restrictions = [restrictions]
    if not isinstance(restrictions, (list, tuple)):
        raise CutuneError("restrictions must be a list of expressions or a function, not %s"
                          % type(restrictions).__name__)
    constraints, python, every = [], [], []
    for r in restrictions:
        if isinstance(r, str):
            what = "restriction"
            tree = _expr.parse(r, what)
            used = _int_params_for(tree, params, what, r)
            predicate = _python_predicate(tree)
            every.append(predicate)
            if any(p.labelled for p in used.values()):
                # Its names stand for floats or strings, which spec expressions cannot hold (a
                # labelled axis reads as its value's index there): evaluate it in Python.
                python.append(predicate)
                continue
            try:
                c = _expr.to_c(tree)
            except _expr.Untranslatable as e:
                raise CutuneError("restriction %r cannot be translated to a cutune expression: %s; pass it as a Python "
                                  "function to have it evaluated in Python" % (r, e)) from None
            _expr.check(tree, r, {n: p.values for n, p in used.items()}, what, "truth")
            constraints.append(c)
        elif isinstance(r, tuple) and len(r) in (2, 3) and callable(r[0]) and isinstance(r[1], (list, tuple)):
            # Kernel Tuner: (function, [names]) calls the function with those parameters only.
            f, selected = r[0], list(r[1])
            for name in selected:
                if not any(p.name == name for p in params):
                    raise CutuneError("restriction %r names %r, which is not a tune parameter" % (r, name))
            predicate = (lambda f, selected: lambda p: bool(f(**{n: p[n] for n in selected})))(f, selected)
            python.append(predicate)
            every.append(predicate)
        elif callable(r):
            # Kernel Tuner calls a function in a restriction list with the parameters as keywords.
            predicate = (lambda f: lambda p: bool(f(**p)))(r)
            python.append(predicate)
            every.append(predicate)
        else:
            raise CutuneError("restriction %r is neither an expression string nor a function" % (r,))
    return constraints, python, every


def _python_predicate(tree):
    code = compile(tree, "<restriction>", "eval")

    def predicate(values):
        try:
            return bool(eval(code, {"__builtins__": __builtins__}, dict(values)))
        except ZeroDivisionError:
            return False  # the engine rejects a config whose constraint divides by zero
    return predicate


def _allowed_lines(params, predicates):
    combinations = 1
    for p in params:
        combinations *= len(p.values)
    if combinations > MAX_PYTHON_COMBINATIONS:
        raise CutuneError("restrictions evaluated in Python (functions, or expressions over non-integer parameters) "
                          "need every combination of the tune parameters, and there are %d (at most %d); write them "
                          "as expressions over integer parameters instead" % (combinations, MAX_PYTHON_COMBINATIONS))
    lines = []
    for values in itertools.product(*(p.values for p in params)):
        config = {p.name: v for p, v in zip(params, values)}
        try:
            ok = all(f(config) for f in predicates)
        except Exception as e:
            raise CutuneError("a restriction failed on %s: %s: %s" % (
                ", ".join("%s=%s" % kv for kv in config.items()), type(e).__name__, e)) from None
        if ok:
            lines.append(",".join("%s=%s" % (p.name, p.text_of(v)) for p, v in zip(params, values)))
    if not lines:
        raise CutuneError("the restrictions leave no config to tune")
    return lines


def _array_type(array, what):
    dtype = array.dtype
    kind = _BUFFER_TYPES.get((dtype.kind, dtype.itemsize))
    if kind is None:
        raise CutuneError("%s: numpy dtype %s is not supported (arrays must be int32, uint32, int64, float32 or float64)"
                          % (what, dtype))
    return kind


def _as_npy(array):
    # C order (the engine reads elements in file order) and little-endian (what .npy readers expect).
    return np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))


def _scalar(value, what):
    """(spec type name, value text) of a scalar argument."""
    if isinstance(value, np.generic):
        kind = _SCALAR_TYPES.get((value.dtype.kind, value.dtype.itemsize))
        if kind is None or value.dtype.kind == "b":
            raise CutuneError("%s: numpy type %s is not supported (scalars must be int32, uint32, int64, uint64, "
                              "float32 or float64)" % (what, value.dtype))
        return kind, _scalar_text(kind, value, what)
    if isinstance(value, bool):
        raise CutuneError("%s: a Python bool has no CUDA type here; pass numpy.int32(%d)" % (what, value))
    if isinstance(value, int):
        # Kernel Tuner asks for numpy scalars (numpy.int32, numpy.float32); a Python int is taken
        # as int32, its most common intent. The engine checks the size against the kernel's
        # parameter, so a kernel expecting 64 bits fails with a clear error, not a wrong value.
        if not -(1 << 31) <= value < (1 << 31):
            raise CutuneError("%s: %d does not fit in an int32; pass numpy.int64(...) or numpy.uint32(...)" % (what, value))
        return "int32", str(value)
    if isinstance(value, float):
        return "float32", _decimal(np.float32(value), what)  # likewise taken as float32
    raise CutuneError("%s: %s is not supported (arguments are numpy arrays and numpy scalars)"
                      % (what, type(value).__name__))


def _arguments(arguments, answer, atol):
    """(buffer tables, step args, arrays to write, expected table, whether anything is verified)."""
    if not isinstance(arguments, (list, tuple)):
        raise CutuneError("arguments must be a list of numpy arrays and scalars")
    if answer is not None:
        if not isinstance(answer, (list, tuple)):
            raise CutuneError("answer must be a list like arguments, with None for what is not checked")
        if len(answer) != len(arguments):
            raise CutuneError("answer has %d entries but there are %d arguments; give None for each argument that "
                              "is not checked" % (len(answer), len(arguments)))
    if not (isinstance(atol, (int, float, np.integer, np.floating)) and math.isfinite(float(atol)) and atol >= 0):
        raise CutuneError("atol must be a finite number >= 0, not %r" % (atol,))
    buffers, args, arrays, expected = [], [], {}, {}
    for i, arg in enumerate(arguments):
        what = "argument %d" % i
        expect = None if answer is None else answer[i]
        if isinstance(arg, np.ndarray):
            name = "arg%d" % i
            kind = _array_type(arg, what)
            table = {"name": name, "type": kind, "length": str(arg.size), "role": "input",
                     "init": {"kind": "npy", "file": name + ".npy"}}
            arrays[name + ".npy"] = _as_npy(arg)
            if expect is not None:
                if not isinstance(expect, np.ndarray):
                    raise CutuneError("answer[%d] must be a numpy array like argument %d, not %s"
                                      % (i, i, type(expect).__name__))
                if expect.size != arg.size:
                    raise CutuneError("answer[%d] has %d elements but argument %d has %d" % (i, expect.size, i, arg.size))
                if expect.dtype != arg.dtype:
                    # Kernel Tuner accepts an answer whose dtype the argument's casts to (float32
                    # output, float64 answer); the engine compares in the buffer's type.
                    if not np.can_cast(arg.dtype, expect.dtype):
                        raise CutuneError("answer[%d] has dtype %s, which argument %d's dtype %s does not cast to"
                                          % (i, expect.dtype, i, arg.dtype))
                    expect = expect.astype(arg.dtype)
                table["role"] = "output"
                if kind.startswith("float"):
                    # Kernel Tuner checks with numpy.allclose(expected, result, atol=atol), whose
                    # rtol is 1e-5: without it float outputs of any magnitude fail on rounding.
                    table["tolerance"] = {"rtol": 1e-5, "atol": float(atol)}
                expected[name] = "answer%d.npy" % i
                arrays["answer%d.npy" % i] = _as_npy(expect)
            buffers.append(table)
            args.append(name)
        else:
            if isinstance(expect, np.ndarray):
                raise CutuneError("answer[%d] is an array but argument %d is a scalar" % (i, i))
            # A non-None answer for a scalar is ignored: scalars are passed by value and cannot
            # change, so Kernel Tuner's comparison of them always passes.
            kind, text = _scalar(arg, what)
            args.append("%s %s" % (kind, text))
    return buffers, args, arrays, expected, bool(expected)


def _inject_constants(source, cmem_args):
    """The source with each ``__constant__`` symbol of cmem_args initialised with its values.

    Kernel Tuner copies cmem_args into the module's constant memory after loading it; cutune
    launches from a spec, which has no such step, so the values become the declaration's
    initialiser instead. The result is the same memory, and it is part of the template source, so
    different constants are a different template in the database.
    """
    if cmem_args is None:
        return source
    if not isinstance(cmem_args, dict):
        raise CutuneError("cmem_args must be a dict of __constant__ symbol name -> numpy array or scalar")
    for name, data in cmem_args.items():
        what = "cmem_args[%r]" % (name,)
        if not is_identifier(name):
            raise CutuneError("%s: %r is not a symbol name" % (what, name))
        if not isinstance(data, (np.ndarray, np.generic)):
            raise CutuneError("%s must be a numpy array or numpy scalar, not %s" % (what, type(data).__name__))
        pattern = re.compile(r"__constant__\b[^;{}=]*?\b" + re.escape(name) + r"\s*((?:\[[^\];]*\]\s*)*);")
        matches = list(pattern.finditer(source))
        if len(matches) != 1:
            raise CutuneError("%s: the source must declare '__constant__ <type> %s[...];' exactly once without an "
                              "initialiser (found %d)" % (what, name, len(matches)))
        m = matches[0]
        if re.search(r"\bextern\b", source[max(0, m.start() - 40):m.start()] + m.group(0)):
            raise CutuneError("%s: the symbol is declared extern; cutune needs its definition" % what)
        flat = np.asarray(data).reshape(-1)
        literals = ", ".join(_cuda_literal(flat.dtype, v, what) for v in flat.tolist())
        source = source[:m.end() - 1] + " = {" + literals + "}" + source[m.end() - 1:]
    return source


def _shared(smem_args, params):
    if smem_args is None:
        return "0"
    if not isinstance(smem_args, dict) or set(smem_args) - {"size"}:
        raise CutuneError("smem_args: only {'size': bytes} is supported")
    size = smem_args.get("size", 0)
    if _is_int(size):
        return str(int(size))
    if isinstance(size, str):
        return _translated(size, params, "smem_args size", "int")
    raise CutuneError("smem_args size must be an int or an expression string; functions are not supported")


def _compose_source(code, kernel_name, block_defines, grid_divisors, compiler_options):
    """The template cutune compiles: Kernel Tuner's implicit definitions, then the user's code.

    - Kernel Tuner #defines block sizes that are not tune parameters (with its defaults) and
      kernel_tuner = 1; tune parameters arrive as -D options from the spec's axes.
    - It also #defines grid_size_x/y/z, which depend on the problem and the config; here they are
      macros over the block parameters and CUTUNE_PROBLEM_SIZE_*, which the spec defines from the
      problem, written only when the code uses them.
    - cutune launches kernels by their unmangled name. Kernel Tuner's CUDA backends wrap the whole
      source in ``extern "C" { }`` unless it contains ``extern "C"`` already; we do exactly the
      same, so any kernel Kernel Tuner finds, cutune finds (and C++ templates fail in both).
    - Compiler options are recorded in a comment: the database keys resumed results by the
      template's text, and code compiled with other options must not inherit them.
    """
    lines = ["// Generated by the cutune Python package from a Kernel Tuner-style call for %s." % kernel_name]
    if compiler_options:
        lines.append("// compiler options: " + " ".join(compiler_options).replace("\n", " "))
    for name, value in block_defines:
        lines.append("#define %s %d" % (name, value))
    uses_grid = set(re.findall(r"\bgrid_size_([xyz])\b", code))
    for d, divisor in enumerate(grid_divisors):
        if DIMS[d] not in uses_grid:
            continue
        p = "CUTUNE_PROBLEM_SIZE_" + DIMS[d].upper()
        value = p if divisor is None else "((%s + (%s) - 1) / (%s))" % (p, divisor, divisor)
        lines.append("#define grid_size_%s %s" % (DIMS[d], value))
    lines.append("#define kernel_tuner 1")
    if 'extern "C"' in code:
        lines.append("#line 1")
        lines.append(code)
    else:
        lines.append('extern "C" {')
        lines.append("#line 1")
        lines.append(code)
        lines.append('}  // extern "C"')
    return "\n".join(lines) + "\n", sorted(uses_grid)


def build_spec(kernel_name, kernel_source, problem_size, arguments, tune_params, grid_div_x=None, grid_div_y=None,
               grid_div_z=None, restrictions=None, answer=None, atol=1e-6, block_size_names=None,
               compiler_options=None, cmem_args=None, smem_args=None):
    """The spec for a Kernel Tuner-style call. Raises CutuneError with one line for bad input."""
    spec = Spec()
    if not is_identifier(kernel_name):
        raise CutuneError("kernel_name %r must be an identifier: it names the kernel and the family in the database "
                          "(templated kernels are not supported)" % (kernel_name,))
    spec.family = kernel_name
    spec.spec_name, spec.source_name = kernel_name + ".toml", kernel_name + ".cu"
    code, include_folder = read_source(kernel_source)

    dims = _problem_dims(problem_size)
    spec.problem_size = tuple(dims)
    if not isinstance(arguments, (list, tuple)):
        raise CutuneError("arguments must be a list of numpy arrays and scalars")
    spec.params = _params(tune_params, len(arguments))
    block_names, block_exprs, block_defines = _block_dims(block_size_names, spec.params)
    grid_exprs, divisors = _grid((grid_div_x, grid_div_y, grid_div_z), block_names, spec.params, PROBLEM_FIELDS)
    buffers, args, spec.arrays, expected, spec.verified = _arguments(arguments, answer, atol)
    constraints, python_filters, spec.filters = _restrictions(restrictions, spec.params)
    shared = _shared(smem_args, spec.params)

    if compiler_options is None:
        compiler_options = []
    if isinstance(compiler_options, str) or not all(isinstance(o, str) for o in compiler_options):
        raise CutuneError("compiler_options must be a list of strings")
    compiler_options = list(compiler_options)

    code = _inject_constants(code, cmem_args)
    spec.source, grid_uses = _compose_source(code, kernel_name, block_defines, divisors, compiler_options)

    # Kernel Tuner skips configs whose block has more threads than the device allows.
    factors = [e for e in block_exprs if e != "1"]
    if any(not e.isdigit() for e in factors):
        constraints.append(" * ".join(factors) + " <= max_threads_per_block")
    if python_filters:
        spec.allowed = _allowed_lines(spec.params, python_filters)

    # Problem: every dimension given is written; y and z at 1 stay out of the key.
    spec.problem_text = ",".join("%s=%d" % (PROBLEM_FIELDS[d], n) for d, n in enumerate(dims))
    spec.problem_key = ",".join("%s=%d" % (PROBLEM_FIELDS[d], n) for d, n in enumerate(dims) if d == 0 or n != 1)

    doc = _toml.Document()
    doc.comment("Generated by the cutune Python package (cutune.tune_kernel) from a Kernel Tuner-style call.\n"
                "Run by hand: tune --kernel-file %s --device 0" % spec.spec_name)
    doc.top("name", kernel_name)
    doc.top("summary", "%s, tuned from Python in Kernel Tuner style" % kernel_name)
    doc.top("source", spec.source_name)
    if compiler_options:
        doc.top("nvrtc_options", compiler_options)
    doc.top("include_paths", [include_folder])
    doc.top("defines", "kernel_tuner", "every tune parameter arrives as -D<name>=<value>")
    doc.top("problems", [spec.problem_text])
    if constraints:
        doc.top("constraints", constraints)
    if spec.allowed is not None:
        doc.top("allowed_configs", "allowed.txt", "what the Python restrictions let through")
    if grid_uses:
        doc.blank()
        doc.table("defines_from_problem", {"CUTUNE_PROBLEM_SIZE_" + d.upper(): "{problem_size_%s}" % d
                                           for d in grid_uses})
    for d, field in enumerate(PROBLEM_FIELDS):
        doc.blank()
        table = {"name": field, "kind": "extent"}
        if d > 0:
            table.update({"default": 1, "keyed_at_default": False})
        doc.array_table("field", table)
    for p in spec.params:
        doc.blank()
        if p.labelled:
            # "values" holding text (not "labels"): the engine then passes each value's text as
            # the -D definition, as Kernel Tuner does, where labels would pass their index.
            doc.array_table("axis", {"name": p.name, "values": p.texts})
        else:
            doc.array_table("axis", {"name": p.name, "values": [int(v) for v in p.values]})
    for table in buffers:
        doc.blank()
        doc.array_table("buffer", table)
    doc.blank()
    doc.array_table("step", {"launch": kernel_name, "grid": grid_exprs, "block": block_exprs, "shared": shared,
                             "args": args})
    if expected:
        doc.blank()
        doc.table("expected", expected)
    spec.toml = doc.text()
    return spec
