"""CPU-only tests of the cutune Python package: spec generation, expression translation, the TOML
writer, result reading, and tune_kernel end to end against a stand-in `tune` (fake_tune.py).

Every generated spec is read back with tomllib (Python 3.11+), so what we check is what a TOML
reader sees, not the text we meant to write. Run: PYTHONPATH=python python3 -m unittest -v test_spec
(from tests/python; ctest does this as python_spec).
"""

import contextlib
import io
import json
import os
import sqlite3
import stat
import sys
import tempfile
import tomllib
import unittest

import numpy as np

import cutune
from cutune import CutuneError, _expr, _run, _spec, _toml

HERE = os.path.dirname(os.path.abspath(__file__))

VECTOR_ADD = """
__global__ void vector_add(float *c, float *a, float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"""


def vector_add_args(n=1000):
    rng = np.random.default_rng(1)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    return [np.zeros_like(a), a, b, np.int32(n)], a, b


def build(**kw):
    args, a, b = vector_add_args()
    defaults = dict(kernel_name="vector_add", kernel_source=VECTOR_ADD, problem_size=1000, arguments=args,
                    tune_params={"block_size_x": [64, 128, 256]})
    defaults.update(kw)
    return _spec.build_spec(**defaults)


def parsed(spec):
    return tomllib.loads(spec.toml)


class TomlWriter(unittest.TestCase):
    def test_strings_read_back_exactly(self):
        for text in ['plain', 'a "quoted" word', 'C:\\path\\to\\file', 'tab\there', 'line\nbreak\r\n',
                     'bell\x07 and nul\x00 and del\x7f', 'unicode: µ λ →', "single 'quotes'", '\\"', '']:
            doc = _toml.Document()
            doc.top("s", text)
            self.assertEqual(tomllib.loads(doc.text())["s"], text, repr(text))

    def test_values_and_keys(self):
        doc = _toml.Document()
        doc.top("i", -5)
        doc.top("f", 1e-06)
        doc.top("g", 0.1)
        doc.top("b", False)
        doc.top("a", [1, "two", 3.5])
        doc.top("needs quotes", {"inner key": {"x": 1}, "plain": "y"})
        doc.array_table("t", {"k": 1})
        doc.array_table("t", {"k": 2})
        doc.table("sub", {"GB/s": 2.0})
        data = tomllib.loads(doc.text())
        self.assertEqual(data["i"], -5)
        self.assertEqual(data["f"], 1e-06)
        self.assertEqual(data["g"], 0.1)
        self.assertIs(data["b"], False)
        self.assertEqual(data["a"], [1, "two", 3.5])
        self.assertEqual(data["needs quotes"], {"inner key": {"x": 1}, "plain": "y"})
        self.assertEqual(data["t"], [{"k": 1}, {"k": 2}])
        self.assertEqual(data["sub"], {"GB/s": 2.0})

    def test_refuses_what_it_cannot_write(self):
        doc = _toml.Document()
        doc.table("t", {})
        with self.assertRaises(ValueError):
            doc.top("late", 1)  # would land inside [t]
        with self.assertRaises(ValueError):
            _toml.value(float("nan"))
        with self.assertRaises(TypeError):
            _toml.value(None)


class Expressions(unittest.TestCase):
    def c(self, text):
        return _expr.to_c(_expr.parse(text, "test"))

    def test_translations(self):
        cases = {
            "block_size_x * block_size_y <= 1024": "(block_size_x * block_size_y) <= 1024",
            "a and b or not c": "(a && b) || (!c)",
            "a // 32": "a / 32",
            "a % 4 == 0": "(a % 4) == 0",
            "True": "1",
            "a == False": "a == 0",
            "1 < a <= 8": "(1 < a) && (a <= 8)",
            "a in (1, 2, 4)": "(a == 1) || (a == 2) || (a == 4)",
            "a not in [3]": "a != 3",
            "a if b > 1 else c": "(b > 1) ? a : c",
            "min(a, b) >= max(c, 2, a)": "min(a, b) >= max(c, 2, a)",
            "-a + +b": "(-a) + b",
            "(a + b) * c": "(a + b) * c",
        }
        for python, c in cases.items():
            self.assertEqual(self.c(python), c, python)

    def test_untranslatable(self):
        for text in ["a ** 2", "a << 1", "a & 1", "abs(a) > 1", "a is None", "x.y > 1", "a > 0.5", "'s' == a",
                     "[a for a in b]", "min(a)", "~a"]:
            with self.assertRaises(_expr.Untranslatable, msg=text):
                self.c(text)

    def test_c_semantics(self):
        tree = _expr.parse("a // b", "t")
        self.assertEqual(_expr.c_eval(tree, {"a": -7, "b": 2}), -3)  # truncates; Python gives -4
        tree = _expr.parse("a % b", "t")
        self.assertEqual(_expr.c_eval(tree, {"a": -7, "b": 2}), -1)  # sign of the dividend; Python gives 1
        with self.assertRaises(_expr.Undefined):
            _expr.c_eval(_expr.parse("a / b", "t"), {"a": 1, "b": 0})

    def test_agrees_with_python_where_check_accepts(self):
        # Property: wherever check() accepts a translation, the C reading equals Python's on
        # every combination of values (check enumerates them all).
        values = {"a": [1, 2, 3, 4, 6, 8, 32, 64], "b": [1, 2, 4, 5], "c": [0, 1, 7]}
        for text in ["a * b <= 64 and c != 1", "a // b >= 2", "a % b == 0 or not c", "b < a < 32",
                     "a in (2, 4, 8)", "(a if c else b) > 2", "max(a, b * 4) == 32", "a // (b + c) > 1"]:
            tree = _expr.parse(text, "t")
            _expr.check(tree, text, values, "restriction", "truth")
            for a in values["a"]:
                for b in values["b"]:
                    for c in values["c"]:
                        env = {"a": a, "b": b, "c": c}
                        try:
                            py = bool(_expr.py_eval(tree, env))
                        except ZeroDivisionError:
                            py = False
                        try:
                            cv = _expr.c_eval(tree, env) != 0
                        except _expr.Undefined:
                            cv = False
                        self.assertEqual(py, cv, (text, env))

    def test_check_refuses_disagreement(self):
        tree = _expr.parse("a / 3 == 2", "t")  # 7 / 3 is 2 in C, 2.33 in Python
        with self.assertRaisesRegex(CutuneError, r"a=7"):
            _expr.check(tree, "a / 3 == 2", {"a": [6, 7]}, "restriction", "truth")
        tree = _expr.parse("a / 32", "t")  # exact on multiples of 32: accepted
        _expr.check(tree, "a / 32", {"a": [32, 64, 128]}, "grid_div_x", "int")
        _expr.check(tree, "a / 32", {"a": [-48]}, "grid_div_x", "int")  # int(-1.5) is -1, as C's -48 / 32
        tree = _expr.parse("a // 32", "t")
        with self.assertRaisesRegex(CutuneError, "at a=-48 Python gives -2 and cutune -1"):
            _expr.check(tree, "a // 32", {"a": [-48]}, "grid_div_x", "int")  # floor, not truncation


class SpecBasics(unittest.TestCase):
    def test_vector_add(self):
        args, a, b = vector_add_args()
        spec = _spec.build_spec("vector_add", VECTOR_ADD, (1000, 1), args, {"block_size_x": [64, 128, 256]})
        data = parsed(spec)
        self.assertEqual(data["name"], "vector_add")
        self.assertEqual(data["source"], "vector_add.cu")
        self.assertEqual(data["defines"], "kernel_tuner")
        self.assertEqual(data["problems"], ["problem_size_x=1000,problem_size_y=1"])
        self.assertEqual(spec.problem_key, "problem_size_x=1000")  # y at its default stays out of the key
        self.assertEqual([f["name"] for f in data["field"]], ["problem_size_x", "problem_size_y", "problem_size_z"])
        self.assertNotIn("default", data["field"][0])
        self.assertEqual(data["field"][1], {"name": "problem_size_y", "kind": "extent", "default": 1,
                                            "keyed_at_default": False})
        self.assertEqual(data["axis"], [{"name": "block_size_x", "values": [64, 128, 256]}])
        self.assertEqual([(bf["name"], bf["type"], bf["length"], bf["role"]) for bf in data["buffer"]],
                         [("arg0", "float32", "1000", "input"), ("arg1", "float32", "1000", "input"),
                          ("arg2", "float32", "1000", "input")])
        self.assertEqual(data["buffer"][1]["init"], {"kind": "npy", "file": "arg1.npy"})
        step = data["step"][0]
        self.assertEqual(step["launch"], "vector_add")
        self.assertEqual(step["grid"], ["ceil_div(problem_size_x, block_size_x)", "problem_size_y", "problem_size_z"])
        self.assertEqual(step["block"], ["block_size_x", "1", "1"])
        self.assertEqual(step["args"], ["arg0", "arg1", "arg2", "int32 1000"])
        self.assertEqual(data["constraints"], ["block_size_x <= max_threads_per_block"])
        self.assertNotIn("expected", data)
        self.assertNotIn("allowed_configs", data)
        self.assertFalse(spec.verified)

    def test_source_wrapped_in_extern_c_with_kernel_tuner_defines(self):
        spec = build()
        self.assertIn('extern "C" {\n#line 1\n', spec.source)
        self.assertIn("#define block_size_y 1\n#define block_size_z 1\n", spec.source)
        self.assertIn("#define kernel_tuner 1\n", spec.source)
        self.assertNotIn("#define block_size_x", spec.source)  # a tune parameter: -D from the axis
        self.assertTrue(spec.source.rstrip().endswith('}  // extern "C"'))

    def test_source_with_extern_c_is_left_alone(self):
        code = 'extern "C" __global__ void vector_add(float *c, float *a, float *b, int n) { }'
        spec = build(kernel_source=code)
        self.assertNotIn('extern "C" {', spec.source)
        self.assertIn("#line 1\n" + code, spec.source)

    def test_write_puts_every_file_in_the_folder(self):
        args, a, b = vector_add_args()
        spec = _spec.build_spec("vector_add", VECTOR_ADD, 1000, args, {"block_size_x": [64, 128]},
                                answer=[a + b, None, None, None],
                                restrictions=[lambda block_size_x: block_size_x > 64])
        with tempfile.TemporaryDirectory() as folder:
            path = spec.write(folder)
            self.assertEqual(os.path.basename(path), "vector_add.toml")
            with open(path, "rb") as f:
                data = tomllib.load(f)
            base = os.path.dirname(path)
            self.assertTrue(os.path.isfile(os.path.join(base, data["source"])))
            for buffer in data["buffer"]:
                loaded = np.load(os.path.join(base, buffer["init"]["file"]))
                self.assertEqual(loaded.dtype, np.float32)
            np.testing.assert_array_equal(np.load(os.path.join(base, "arg1.npy")), a)
            np.testing.assert_array_equal(np.load(os.path.join(base, data["expected"]["arg0"])), a + b)
            with open(os.path.join(base, data["allowed_configs"])) as f:
                self.assertEqual(f.read(), "block_size_x=128\n")

    def test_kernel_source_from_a_file(self):
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "va.cu")
            with open(path, "w") as f:
                f.write(VECTOR_ADD)
            spec = build(kernel_source=path)
            self.assertIn("c[i] = a[i] + b[i]", spec.source)
            self.assertEqual(parsed(spec)["include_paths"], [folder])  # its #includes resolve beside it
        with self.assertRaisesRegex(CutuneError, "no such file"):
            build(kernel_source="missing_kernel.cu")

    def test_compiler_options_are_passed_and_part_of_the_template(self):
        spec = build(compiler_options=["-use_fast_math", "-DX=1"])
        self.assertEqual(parsed(spec)["nvrtc_options"], ["-use_fast_math", "-DX=1"])
        self.assertIn("// compiler options: -use_fast_math -DX=1", spec.source)
        self.assertNotEqual(spec.source, build().source)


class Arguments(unittest.TestCase):
    def scalar_arg(self, value):
        args, _, _ = vector_add_args()
        return parsed(build(arguments=args[:3] + [value]))["step"][0]["args"][3]

    def test_scalars(self):
        self.assertEqual(self.scalar_arg(np.int32(-5)), "int32 -5")
        self.assertEqual(self.scalar_arg(np.uint32(4000000000)), "uint32 4000000000")
        self.assertEqual(self.scalar_arg(np.int64(1 << 40)), "int64 1099511627776")
        self.assertEqual(self.scalar_arg(np.uint64(1 << 63)), "uint64 9223372036854775808")
        self.assertEqual(self.scalar_arg(np.float32(2.5)), "float32 2.5")
        self.assertEqual(self.scalar_arg(np.float64(-0.125)), "float64 -0.125")
        self.assertEqual(self.scalar_arg(7), "int32 7")          # Python int: int32
        self.assertEqual(self.scalar_arg(1e-5), "float32 " + np.format_float_positional(
            float(np.float32(1e-5)), unique=True, trim="0"))     # Python float: float32
        # Exact: the text reads back as the float32 value, with no exponent.
        text = self.scalar_arg(np.float32(0.1)).split()[1]
        self.assertEqual(np.float32(float(text)), np.float32(0.1))
        self.assertEqual(float(text), float(np.float32(0.1)))
        self.assertNotIn("e", self.scalar_arg(np.float32(1e-20)))

    def test_bad_scalars(self):
        for value, pattern in [(np.float16(1), "float16"), (np.int8(1), "int8"), (True, "bool"), (np.bool_(True), "bool"),
                               (1 << 40, "int32"), (np.float32("inf"), "finite"), ("7", "str"), ([1, 2], "list")]:
            with self.assertRaisesRegex(CutuneError, pattern, msg=repr(value)):
                self.scalar_arg(value)

    def test_array_types(self):
        for dtype, name in [(np.int32, "int32"), (np.uint32, "uint32"), (np.int64, "int64"), (np.float32, "float32"),
                            (np.float64, "float64")]:
            args = [np.zeros(10, dtype=dtype)]
            spec = _spec.build_spec("k", "__global__ void k(void *p) {}", 10, args, {"block_size_x": [32]})
            self.assertEqual(parsed(spec)["buffer"][0]["type"], name)
        for dtype in [np.complex64, np.float16, np.int16, np.uint64, np.bool_]:
            with self.assertRaisesRegex(CutuneError, "argument 0: numpy dtype"):
                _spec.build_spec("k", "__global__ void k(void *p) {}", 10, [np.zeros(3, dtype=dtype)],
                                 {"block_size_x": [32]})

    def test_arrays_are_written_in_c_order_little_endian(self):
        m = np.arange(12, dtype=">f4").reshape(3, 4).T  # big-endian and not C-contiguous
        spec = _spec.build_spec("k", "__global__ void k(float *p) {}", 12, [m], {"block_size_x": [32]})
        written = spec.arrays["arg0.npy"]
        self.assertTrue(written.flags.c_contiguous)
        self.assertEqual(written.dtype.str, "<f4")
        np.testing.assert_array_equal(written.reshape(-1), m.reshape(-1))
        self.assertEqual(parsed(spec)["buffer"][0]["length"], "12")

    def test_answer(self):
        args, a, b = vector_add_args()
        ints = np.arange(1000, dtype=np.int32)
        args = args[:3] + [ints, np.int32(1000)]
        code = "__global__ void vector_add(float *c, float *a, float *b, int *d, int n) {}"
        spec = _spec.build_spec("vector_add", code, 1000, args, {"block_size_x": [64]},
                                answer=[(a + b).astype(np.float64), None, None, ints * 2, np.int32(1000)], atol=1e-3)
        data = parsed(spec)
        roles = {bf["name"]: bf for bf in data["buffer"]}
        self.assertEqual(roles["arg0"]["role"], "output")
        self.assertEqual(roles["arg0"]["tolerance"], {"rtol": 1e-5, "atol": 1e-3})  # numpy.allclose's rule
        self.assertEqual(roles["arg3"]["role"], "output")
        self.assertNotIn("tolerance", roles["arg3"])  # integers: exact
        self.assertEqual(roles["arg1"]["role"], "input")
        self.assertEqual(data["expected"], {"arg0": "answer0.npy", "arg3": "answer3.npy"})
        self.assertEqual(spec.arrays["answer0.npy"].dtype, np.float32)  # cast to the output's type
        # The output starts from the argument's contents, as Kernel Tuner copies them.
        self.assertEqual(roles["arg0"]["init"], {"kind": "npy", "file": "arg0.npy"})
        self.assertTrue(spec.verified)

    def test_answer_errors(self):
        args, a, b = vector_add_args()
        with self.assertRaisesRegex(CutuneError, "answer has 2 entries but there are 4 arguments"):
            build(answer=[a, None])
        with self.assertRaisesRegex(CutuneError, r"answer\[0\] has 5 elements"):
            build(answer=[np.zeros(5, np.float32), None, None, None])
        with self.assertRaisesRegex(CutuneError, r"answer\[0\] has dtype int32"):
            build(answer=[np.zeros(1000, np.int32), None, None, None])
        with self.assertRaisesRegex(CutuneError, r"answer\[3\] is an array but argument 3 is a scalar"):
            build(answer=[None, None, None, np.zeros(1, np.int32)])
        with self.assertRaisesRegex(CutuneError, "atol"):
            build(answer=[a + b, None, None, None], atol=float("nan"))
        self.assertFalse(build(answer=[None, None, None, None]).verified)


class TuneParams(unittest.TestCase):
    def test_labels_hold_the_values_text(self):
        spec = build(tune_params={"block_size_x": [64, 128], "alpha": [0.5, 1e-05, 2.0], "mode": ["shared", "global"],
                                  "flag": [True, False], "mixed": [1, 1.5]})
        axes = {ax["name"]: ax for ax in parsed(spec)["axis"]}
        self.assertEqual(axes["block_size_x"], {"name": "block_size_x", "values": [64, 128]})
        self.assertEqual(axes["alpha"]["values"], ["0.5", "1e-05", "2.0"])  # what Kernel Tuner #defines
        self.assertEqual(axes["mode"]["values"], ["shared", "global"])
        self.assertEqual(axes["flag"]["values"], ["True", "False"])
        self.assertEqual(axes["mixed"]["values"], ["1", "1.5"])
        self.assertEqual(spec.param("alpha").by_text["1e-05"], 1e-05)

    def test_numpy_values(self):
        spec = build(tune_params={"block_size_x": np.array([64, 128]), "f": [np.float32(0.25)]})
        axes = {ax["name"]: ax for ax in parsed(spec)["axis"]}
        self.assertEqual(axes["block_size_x"]["values"], [64, 128])
        self.assertEqual(axes["f"]["values"], ["0.25"])

    def test_bad_params(self):
        for params, pattern in [({}, "non-empty"), ([("a", [1])], "dict"), ({"block_size_x": []}, "no values"),
                                ({"block_size_x": [64, 64]}, "twice"), ({"time": [1]}, "reserved"),
                                ({"grid_size_x": [1]}, "reserved"), ({"problem_size_x": [1]}, "reserved"),
                                ({"arg2": [1]}, "reserved"), ({"max_threads_per_block": [1]}, "reserved"),
                                ({"2x": [1]}, "identifier"), ({"a-b": [1]}, "identifier"),
                                ({"s": ["a,b"]}, "definition"), ({"s": ["a=b"]}, "definition"), ({"s": [""]}, "definition"),
                                ({"loop_unroll_factor_0": [1]}, "loop_unroll_factor"), ({"n": 5}, "list"),
                                ({"n": "abc"}, "list"), ({"n": [1 << 64]}, "64 bits")]:
            with self.assertRaisesRegex(CutuneError, pattern, msg=repr(params)):
                build(tune_params=params)
        build(tune_params={"arg7": [1]})  # no buffer arg7 among 4 arguments: allowed


class GridAndBlock(unittest.TestCase):
    def step(self, **kw):
        return parsed(build(**kw))["step"][0]

    def test_defaults(self):
        step = self.step(tune_params={"block_size_x": [32, 64], "block_size_y": [1, 2]}, problem_size=(1000, 10))
        self.assertEqual(step["grid"], ["ceil_div(problem_size_x, block_size_x)", "ceil_div(problem_size_y, block_size_y)",
                                        "problem_size_z"])
        self.assertEqual(step["block"], ["block_size_x", "block_size_y", "1"])

    def test_block_size_not_tuned_uses_kernel_tuners_default(self):
        spec = build(tune_params={"tile": [1, 2]})
        step = parsed(spec)["step"][0]
        self.assertEqual(step["block"], ["256", "1", "1"])
        self.assertEqual(step["grid"][0], "problem_size_x")  # block_size_x is no parameter: divide by 1
        self.assertIn("#define block_size_x 256\n", spec.source)
        self.assertNotIn("constraints", parsed(spec))

    def test_grid_divisors(self):
        step = self.step(tune_params={"block_size_x": [32, 64], "tile_size_x": [1, 2], "block_size_y": [2, 4]},
                         problem_size=(4096, 4096), grid_div_x=["block_size_x", "tile_size_x"],
                         grid_div_y=["block_size_y // 2", 4], grid_div_z=[])
        self.assertEqual(step["grid"], ["ceil_div(problem_size_x, block_size_x * tile_size_x)",
                                        "ceil_div(problem_size_y, (block_size_y / 2) * 4)", "problem_size_z"])

    def test_grid_divisor_true_division_is_checked(self):
        step = self.step(tune_params={"block_size_x": [32, 64]}, grid_div_x=["block_size_x/32"])
        self.assertEqual(step["grid"][0], "ceil_div(problem_size_x, (block_size_x / 32))")
        with self.assertRaisesRegex(CutuneError, "grid_div_x 'block_size_x/3\\*2'.*block_size_x=32 Python gives 21 and cutune 20"):
            self.step(tune_params={"block_size_x": [30, 32]}, grid_div_x=["block_size_x/3*2"])

    def test_grid_divisor_errors(self):
        with self.assertRaisesRegex(CutuneError, "grid_div_x: functions"):
            self.step(grid_div_x=lambda p: p["block_size_x"])
        with self.assertRaisesRegex(CutuneError, "not a tune parameter"):
            self.step(grid_div_x=["warps"])
        with self.assertRaisesRegex(CutuneError, "not integers"):
            self.step(tune_params={"block_size_x": [32], "f": [0.5]}, grid_div_x=["f"])

    def test_block_size_names(self):
        spec = build(tune_params={"threads": [32, 64], "rows": [1, 2]}, block_size_names=["threads", "rows"])
        step = parsed(spec)["step"][0]
        self.assertEqual(step["block"], ["threads", "rows", "1"])
        self.assertEqual(step["grid"][:2], ["ceil_div(problem_size_x, threads)", "ceil_div(problem_size_y, rows)"])
        self.assertEqual(parsed(spec)["constraints"], ["threads * rows <= max_threads_per_block"])
        self.assertIn("#define block_size_z 1\n", spec.source)
        with self.assertRaisesRegex(CutuneError, "must be integers"):
            build(tune_params={"block_size_x": [0.5]})
        with self.assertRaisesRegex(CutuneError, "block_size_names"):
            build(block_size_names=["a", "b", "c", "d"])

    def test_grid_size_macros_when_the_source_uses_them(self):
        code = VECTOR_ADD.replace("if (i < n)", "if (i < n && blockIdx.x < grid_size_x)")
        spec = build(kernel_source=code, tune_params={"block_size_x": [64], "tile": [1, 2]},
                     grid_div_x=["block_size_x", "tile"])
        self.assertIn("#define grid_size_x ((CUTUNE_PROBLEM_SIZE_X + (block_size_x * tile) - 1) / (block_size_x * tile))",
                      spec.source)
        self.assertNotIn("grid_size_y", spec.source)
        self.assertEqual(parsed(spec)["defines_from_problem"], {"CUTUNE_PROBLEM_SIZE_X": "{problem_size_x}"})
        self.assertNotIn("defines_from_problem", parsed(build()))

    def test_smem_args(self):
        self.assertEqual(self.step(smem_args={"size": 1024})["shared"], "1024")
        self.assertEqual(self.step(smem_args={"size": "block_size_x * 4"})["shared"], "block_size_x * 4")
        with self.assertRaises(CutuneError):
            self.step(smem_args={"size": lambda p: 4})
        with self.assertRaises(CutuneError):
            self.step(smem_args={"size": 4, "carveout": 1})

    def test_problem_sizes(self):
        self.assertEqual(build(problem_size=(8, 4, 2)).problem_key, "problem_size_x=8,problem_size_y=4,problem_size_z=2")
        self.assertEqual(build(problem_size=(8, 1, 2)).problem_key, "problem_size_x=8,problem_size_z=2")
        self.assertEqual(build(problem_size=np.int64(8)).problem_text, "problem_size_x=8")
        for size, pattern in [(0, "at least 1"), ((1, 2, 3, 4), "1 to 3"), ("n", "not supported"),
                              (lambda p: 4, "not supported"), ((4, "block_size_x"), "not an int"), (4.0, "int")]:
            with self.assertRaisesRegex(CutuneError, pattern, msg=repr(size)):
                build(problem_size=size)


class Restrictions(unittest.TestCase):
    params = {"block_size_x": [32, 64, 128, 256], "tile": [1, 2, 4]}

    def test_strings_become_constraints(self):
        spec = build(tune_params=self.params,
                     restrictions=["block_size_x * tile <= 512 and tile != 2", "not block_size_x // 64 == 0",
                                   "tile in (1, 4) or block_size_x == 32", "True"])
        self.assertEqual(parsed(spec)["constraints"],
                         ["((block_size_x * tile) <= 512) && (tile != 2)", "!((block_size_x / 64) == 0)",
                          "((tile == 1) || (tile == 4)) || (block_size_x == 32)", "1",
                          "block_size_x <= max_threads_per_block"])
        self.assertIsNone(spec.allowed)
        self.assertTrue(spec.accepts({"block_size_x": 64, "tile": 4}))
        self.assertFalse(spec.accepts({"block_size_x": 32, "tile": 4}))

    def test_untranslatable_strings_are_refused_by_name(self):
        for r, pattern in [("block_size_x ** 2 < 4096", r"'block_size_x \*\* 2 < 4096'.*'\*\*'"),
                           ("tile & 1", "'&'"), ("block_size_x >", "not a Python expression"),
                           ("warps > 1", "'warps', which is not a tune parameter")]:
            with self.assertRaisesRegex(CutuneError, pattern, msg=r):
                build(tune_params=self.params, restrictions=[r])
        with self.assertRaisesRegex(CutuneError, "block_size_x / 3 == 21"):
            build(tune_params=self.params, restrictions=["block_size_x / 3 == 21"])
        # '/' that is exact on every value means the same in C: accepted.
        self.assertIn("(block_size_x / 32) >= 2",
                      parsed(build(tune_params=self.params, restrictions=["block_size_x / 32 >= 2"]))["constraints"])

    def test_functions_are_evaluated_in_python(self):
        spec = build(tune_params=self.params, restrictions=lambda p: p["block_size_x"] * p["tile"] == 256)
        self.assertEqual(spec.allowed, ["block_size_x=64,tile=4", "block_size_x=128,tile=2", "block_size_x=256,tile=1"])
        self.assertEqual(parsed(spec)["allowed_configs"], "allowed.txt")
        spec = build(tune_params=self.params, restrictions=[lambda block_size_x, tile: tile == 4, "block_size_x >= 64"])
        # The list holds what the Python restrictions let through; strings still go to the engine.
        self.assertEqual(spec.allowed, ["block_size_x=32,tile=4", "block_size_x=64,tile=4", "block_size_x=128,tile=4",
                                        "block_size_x=256,tile=4"])
        self.assertIn("block_size_x >= 64", parsed(spec)["constraints"])
        spec = build(tune_params=self.params, restrictions=[(lambda tile: tile > 1, ["tile"])])
        self.assertEqual(len(spec.allowed), 8)

    def test_strings_over_labelled_parameters_are_evaluated_in_python(self):
        spec = build(tune_params={"block_size_x": [64, 128], "alpha": [0.5, 1.5], "mode": ["a", "b"]},
                     restrictions=["alpha * block_size_x > 64", "mode == 'a'"])
        self.assertEqual(spec.allowed, ["block_size_x=64,alpha=1.5,mode=a", "block_size_x=128,alpha=1.5,mode=a"])
        self.assertEqual(parsed(spec)["constraints"], ["block_size_x <= max_threads_per_block"])

    def test_limits(self):
        with self.assertRaisesRegex(CutuneError, "no config"):
            build(tune_params=self.params, restrictions=lambda p: False)
        big = {"a%d" % i: list(range(11)) for i in range(6)}  # 11^6 > 1,000,000
        with self.assertRaisesRegex(CutuneError, "1771561"):
            build(tune_params=big, restrictions=lambda p: True)
        build(tune_params=big, restrictions=["a0 + a1 < 12"])  # strings scale: the engine enumerates
        with self.assertRaisesRegex(CutuneError, "tile=1: ZeroDivisionError"):
            build(tune_params=self.params, restrictions=lambda p: 1 // (p["tile"] - 1))
        with self.assertRaisesRegex(CutuneError, "neither"):
            build(tune_params=self.params, restrictions=[42])


class ConstantMemory(unittest.TestCase):
    code = "__constant__ float d_filter[3*3];\n__constant__ int d_n;\n__global__ void k(float *o) { }\n"

    def test_initialisers(self):
        f = np.array([0.1, -2.5, 1e-20, 3, 0, 1, 2, 3, 4], dtype=np.float32)
        spec = _spec.build_spec("k", self.code, 9, [np.zeros(9, np.float32)], {"block_size_x": [32]},
                                cmem_args={"d_filter": f, "d_n": np.int32(-2147483648)})
        self.assertIn("__constant__ float d_filter[3*3] = {0.10000000149011612f, -2.5f, ", spec.source)
        self.assertIn("__constant__ int d_n = {(-2147483647 - 1)};", spec.source)
        literals = spec.source.split("d_filter[3*3] = {")[1].split("}")[0].split(", ")
        self.assertEqual(np.array([float(t.rstrip("f")) for t in literals], dtype=np.float32).tobytes(), f.tobytes())

    def test_other_types(self):
        code = "__constant__ double a[2]; __constant__ unsigned b[1]; __constant__ long long c[1];"
        spec = _spec.build_spec("k", code + "__global__ void k(float *o) {}", 9, [np.zeros(9, np.float32)],
                                {"block_size_x": [32]}, cmem_args={"a": np.array([0.1, 2.0]), "b": np.array([7], np.uint32),
                                                                   "c": np.array([-5], np.int64)})
        self.assertIn("a[2] = {0.1, 2.0};", spec.source)
        self.assertIn("b[1] = {7u};", spec.source)
        self.assertIn("c[1] = {-5LL};", spec.source)

    def test_errors(self):
        base = dict(kernel_name="k", problem_size=9, arguments=[np.zeros(9, np.float32)], tune_params={"block_size_x": [32]})
        with self.assertRaisesRegex(CutuneError, "found 0"):
            _spec.build_spec(kernel_source=self.code, cmem_args={"d_missing": np.zeros(1, np.float32)}, **base)
        with self.assertRaisesRegex(CutuneError, "found 0"):
            _spec.build_spec(kernel_source="__constant__ float d[2] = {1, 2};", cmem_args={"d": np.zeros(2, np.float32)},
                             **base)
        with self.assertRaisesRegex(CutuneError, "finite"):
            _spec.build_spec(kernel_source=self.code, cmem_args={"d_filter": np.full(9, np.nan, np.float32)}, **base)
        with self.assertRaisesRegex(CutuneError, "numpy array"):
            _spec.build_spec(kernel_source=self.code, cmem_args={"d_filter": [1.0] * 9}, **base)


class MiscErrors(unittest.TestCase):
    def test_kernel_names(self):
        for name in ["vector add", "vector_add<float>", "", None, "1k", "ünï"]:
            with self.assertRaisesRegex(CutuneError, "kernel_name", msg=repr(name)):
                build(kernel_name=name)

    def test_kernel_sources(self):
        with self.assertRaisesRegex(CutuneError, "generator"):
            build(kernel_source=lambda p: VECTOR_ADD)
        with self.assertRaisesRegex(CutuneError, "lists of files"):
            build(kernel_source=["a.cu", "b.cu"])

    def test_tune_kernel_refuses_before_running_anything(self):
        args, a, b = vector_add_args()
        call = dict(kernel_name="vector_add", kernel_source=VECTOR_ADD, problem_size=1000, arguments=args,
                    tune_params={"block_size_x": [64]})
        env = dict(os.environ, CUTUNE_TUNE="/nonexistent/tune")
        for extra, pattern in [({"lang": "OpenCL"}, "lang='OpenCL'"), ({"verify": lambda a, b, atol: True}, "verify="),
                               ({"texmem_args": {"t": a}}, "not supported by cutune: texmem_args"),
                               ({"observers": [object()], "defines": {}}, "defines, observers"),
                               ({"frobnicate": 1}, "unknown option.*frobnicate"),
                               ({"strategy": "pso"}, "strategy 'pso' is not supported"),
                               ({"strategy_options": {"popsize": 4}}, "popsize"), ({"device": -1}, "device"),
                               ({"iterations": 0}, "iterations")]:
            with self.assertRaisesRegex(CutuneError, pattern, msg=repr(extra)):
                with patched_environ(env):
                    cutune.tune_kernel(**dict(call, **extra))

    def test_strategy_arguments(self):
        self.assertEqual(cutune._strategy_args("random_sample", {"max_fevals": 20, "time_limit": 60, "seed": 3}, None),
                         ["--strategy", "random_sampling", "--max-evals", "20", "--time-limit", "60.0", "--seed", "3"])
        self.assertEqual(cutune._strategy_args("nlopt_sbplx", None, 5), ["--strategy", "nlopt_sbplx", "--seed", "5"])
        self.assertEqual(cutune._strategy_args(None, None, None), [])
        with self.assertRaisesRegex(CutuneError, "disagree"):
            cutune._strategy_args(None, {"seed": 1}, 2)
        with self.assertRaisesRegex(CutuneError, "max_fevals"):
            cutune._strategy_args(None, {"max_fevals": 0}, None)

    def test_kernel_tuner_defaults_are_accepted(self):
        cutune._unsupported({"platform": 0, "objective": "time", "objective_higher_is_better": False,
                             "simulation_mode": False, "observers": None}, [])
        with self.assertRaises(CutuneError):
            cutune._unsupported({"platform": 1}, [])


@contextlib.contextmanager
def patched_environ(env):
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


class RunHelpers(unittest.TestCase):
    def test_database_path(self):
        with patched_environ({"CUTUNE_DB": "/tmp/x/c.db", "HOME": "/home/u"}):
            self.assertEqual(_run.database_path(), "/tmp/x/c.db")
            self.assertEqual(_run.database_path("/tmp/given.db"), "/tmp/given.db")
        with patched_environ({"CUTUNE_DB": "", "XDG_DATA_HOME": "/xdg", "HOME": "/home/u"}):
            self.assertEqual(_run.database_path(), "/xdg/cutune/cutune.db")
        with patched_environ({"XDG_DATA_HOME": "", "HOME": "/home/u"}):
            self.assertEqual(_run.database_path(), "/home/u/.local/share/cutune/cutune.db")

    def test_error_messages(self):
        e = _run.error_for(2, "tuning...\ntune: error: /tmp/s/k.toml: step 1: args: 3 given, the kernel takes 4\n")
        self.assertEqual(str(e), "/tmp/s/k.toml: step 1: args: 3 given, the kernel takes 4")
        self.assertEqual(e.exit_code, 2)
        self.assertEqual(str(_run.error_for(3, "")), "no CUDA driver or no GPU (tune exited with code 3)")
        self.assertEqual(str(_run.error_for(3, "tune: error: no CUDA device 0\n")), "no CUDA device 0")
        self.assertIn("signal 9", str(_run.error_for(-9, "")))
        self.assertIn("exit code 1: boom", str(_run.error_for(1, "boom\n")))

    def test_output_parsing(self):
        self.assertEqual(_run.run_id_of("tuning\nrun 17: 3 evaluated, 2 already stored; measured copy bandwidth 3000 GB/s\n"),
                         17)
        with self.assertRaises(CutuneError):
            _run.run_id_of("nothing")
        summary = _run.compile_summary(
            "k sm_90  (a): 10 raw configs, 2 rejected by constraints, 7 compiled, 1 failed (0.3 s)\n"
            "k sm_90  (b): 10 raw configs, 2 rejected by constraints, 8 compiled, 0 failed (0.3 s)\n",
            "FAILED block_size_x=64:\nerror: static assertion failed\nmore\n")
        self.assertEqual((summary["compiled"], summary["failed"]), (15, 1))
        self.assertEqual(summary["failures"], [{"config": "block_size_x=64", "log": "error: static assertion failed\nmore\n"}])

    def test_find_tune(self):
        with tempfile.TemporaryDirectory() as folder:
            plain = os.path.join(folder, "tune")
            with open(plain, "w") as f:
                f.write("#!/bin/sh\n")
            with patched_environ({"CUTUNE_TUNE": plain, "PATH": ""}):
                with self.assertRaisesRegex(CutuneError, "not an executable"):
                    _run.find_tune()
            os.chmod(plain, 0o755)
            with patched_environ({"CUTUNE_TUNE": plain}):
                self.assertEqual(_run.find_tune(), plain)
            with patched_environ({"PATH": folder}):
                self.assertEqual(_run.find_tune(), plain)
            with patched_environ({"PATH": ""}):
                with self.assertRaisesRegex(CutuneError, "CUTUNE_TUNE"):
                    _run.find_tune()

    def test_cache_files(self):
        self.assertEqual(_run.cache_file_name("out"), "out.json")
        self.assertEqual(_run.cache_file_name("out.json.gz"), "out.json.gz")
        with tempfile.TemporaryDirectory() as folder:
            theirs = os.path.join(folder, "kt.json")
            with open(theirs, "w") as f:
                json.dump({"device_name": "x", "cache": {}}, f)
            with self.assertRaisesRegex(CutuneError, "not written by cutune"):
                _run.check_cache_file(theirs)
            ours = os.path.join(folder, "ours.json")
            with open(ours, "w") as f:
                json.dump({"cache": {}, "cutune": {"version": 1}}, f)
            _run.check_cache_file(ours)
            _run.check_cache_file(os.path.join(folder, "new.json"))


# ---- result reading and tune_kernel end to end ---------------------------------------------------

FAKE_SCHEMA = """
CREATE TABLE devices (id INTEGER PRIMARY KEY, uuid TEXT, name TEXT, cc_major INTEGER, cc_minor INTEGER);
CREATE TABLE templates (id INTEGER PRIMARY KEY, family TEXT, source_hash TEXT, source TEXT, created_at TEXT);
CREATE TABLE problems (id INTEGER PRIMARY KEY, family TEXT, key TEXT, size INTEGER, dtype TEXT, descriptor TEXT,
                       match_key TEXT);
CREATE TABLE runs (id INTEGER PRIMARY KEY, family TEXT, device_id INTEGER, template_id INTEGER, strategy TEXT,
                   seed INTEGER, budget TEXT, command TEXT, tool_version TEXT, started_at TEXT, finished_at TEXT,
                   status TEXT);
CREATE TABLE results (id INTEGER PRIMARY KEY, run_id INTEGER, device_id INTEGER, template_id INTEGER,
                      problem_id INTEGER, config TEXT, config_json TEXT, status TEXT, time_ms_median REAL,
                      time_ms_min REAL, time_ms_max REAL, time_ms_stdev REAL, samples INTEGER, compile_s REAL,
                      verify_s REAL, benchmark_s REAL, gbs REAL, gflops REAL, copy_fraction REAL, error TEXT,
                      error_index INTEGER, launch_json TEXT, created_at TEXT, elapsed_s REAL);
"""


def make_results_db(path, rows, verified_column=False):
    """A database with the columns read_results reads (db/schema.cpp's names)."""
    db = sqlite3.connect(path)
    db.executescript(FAKE_SCHEMA)
    if verified_column:
        db.execute("ALTER TABLE results ADD COLUMN verified INTEGER")
    db.execute("INSERT INTO devices VALUES (1, 'GPU-1234', 'NVIDIA H100', 9, 0)")
    db.execute("INSERT INTO templates VALUES (1, 'vector_add', 'h', 's', 't'), (2, 'vector_add', 'other', 's', 't')")
    db.execute("INSERT INTO problems VALUES (1, 'vector_add', 'problem_size_x=1000', 1000, '', '{}', ''),"
               " (2, 'vector_add', 'problem_size_x=2000', 2000, '', '{}', '')")
    db.execute("INSERT INTO runs VALUES (5, 'vector_add', 1, 1, 'brute_force', 0, '', '', '0.1.0', 't', 't', 'done')")
    for row in rows:
        template, problem, config, status, median = row[:5]
        config_json = json.dumps(config)
        text = ",".join("%s=%s" % kv for kv in config.items())
        values = [5, 1, template, problem, text, config_json, status, median, median and median * 0.9,
                  median and median * 1.1, median and 0.01, 12, 0.5, 0.02, 0.1, None if median is None else 100.0, None,
                  None, "" if status == "ok" else "it failed", None, "{}", "2026-11-25T10:00:00Z", 1.0]
        columns = "run_id, device_id, template_id, problem_id, config, config_json, status, time_ms_median, " \
                  "time_ms_min, time_ms_max, time_ms_stdev, samples, compile_s, verify_s, benchmark_s, gbs, gflops, " \
                  "copy_fraction, error, error_index, launch_json, created_at, elapsed_s"
        if verified_column:
            values.append(row[5] if len(row) > 5 else 1)
            columns += ", verified"
        db.execute("INSERT INTO results (%s) VALUES (%s)" % (columns, ", ".join("?" * len(values))), values)
    db.commit()
    db.close()


class ReadResults(unittest.TestCase):
    def test_rows_become_kernel_tuner_results(self):
        spec = build(tune_params={"block_size_x": [64, 128, 256], "alpha": [0.5, 2.0]},
                     restrictions=["block_size_x != 256"])
        rows = [
            (1, 1, {"block_size_x": 64, "alpha": "0.5"}, "ok", 0.25),
            (1, 1, {"block_size_x": 128, "alpha": "2.0"}, "compile_error", None),
            (1, 1, {"block_size_x": 128, "alpha": "0.5"}, "wrong_result", None),
            (1, 1, {"block_size_x": 64, "alpha": "2.0"}, "launch_error", None),
            (1, 1, {"block_size_x": 256, "alpha": "0.5"}, "ok", 0.1),       # now ruled out by the restriction
            (1, 1, {"block_size_x": 64}, "ok", 0.1),                         # another space
            (1, 1, {"block_size_x": 512, "alpha": "0.5"}, "ok", 0.1),       # a value no longer listed
            (2, 1, {"block_size_x": 64, "alpha": "0.5"}, "ok", 0.1),        # another template
            (1, 2, {"block_size_x": 64, "alpha": "0.5"}, "ok", 0.1),        # another problem
        ]
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "c.db")
            make_results_db(path, rows)
            results, info = _run.read_results(path, 5, spec)
        self.assertEqual(len(results), 4)
        first = results[0]
        self.assertEqual(list(first)[:2], ["block_size_x", "alpha"])
        self.assertEqual((first["block_size_x"], first["alpha"]), (64, 0.5))
        self.assertIsInstance(first["alpha"], float)
        self.assertEqual(first["time"], 0.25)
        self.assertAlmostEqual(first["compile_time"], 500.0)
        self.assertAlmostEqual(first["verification_time"], 20.0)
        self.assertAlmostEqual(first["benchmark_time"], 100.0)
        self.assertEqual(first["GB/s"], 100.0)
        self.assertNotIn("GFLOP/s", first)
        self.assertNotIn("times", first)
        self.assertEqual(first["cutune"]["samples"], 12)
        self.assertFalse(first["cutune"]["verified"])  # no answer: unverified
        self.assertEqual([r["time"] for r in results[1:]],
                         ["CompilationFailedConfig", "RuntimeFailedConfig", "RuntimeFailedConfig"])
        self.assertIsInstance(results[1]["time"], cutune.CompilationFailedConfig)
        self.assertIsInstance(results[2]["time"], cutune.ErrorConfig)
        self.assertEqual(repr(results[2]["time"]), "RuntimeFailedConfig")
        self.assertEqual(results[2]["cutune"]["status"], "wrong_result")
        self.assertEqual(info["device"]["uuid"], "GPU-1234")
        self.assertEqual(json.loads(json.dumps(results))[1]["time"], "CompilationFailedConfig")

    def test_verified_column(self):
        args, a, b = vector_add_args()
        spec = build(answer=[a + b, None, None, None])
        rows = [(1, 1, {"block_size_x": 64}, "ok", 0.2, 1), (1, 1, {"block_size_x": 128}, "ok", 0.2, 0)]
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "c.db")
            make_results_db(path, rows, verified_column=True)
            results, _ = _run.read_results(path, 5, spec)
        self.assertEqual([r["cutune"]["verified"] for r in results], [True, False])


FAKE_TUNE = r'''#!PYTHON
# A stand-in for tune that honours the CLI contract the package relies on, so the subprocess,
# error and result plumbing is tested without the engine or a GPU.
import itertools, json, os, sqlite3, sys, tomllib
argv = sys.argv[1:]
with open(os.environ["FAKE_TUNE_LOG"], "a") as log:
    log.write(json.dumps(argv) + "\n")
def opt(name):
    return argv[argv.index(name) + 1] if name in argv else None
if argv[:2] == ["db", "export-kt"]:
    with open(argv[2], "w") as f:
        json.dump({"cache": {}, "cutune": {"family": opt("--family"), "device": opt("--device"),
                                            "problem": opt("--problem")}}, f)
    sys.exit(0)
spec_path = opt("--kernel-file")
spec = tomllib.loads(open(spec_path).read())
base = os.path.dirname(spec_path)
for name in [spec["source"]] + [b["init"]["file"] for b in spec["buffer"]] + list(spec.get("expected", {}).values()):
    assert os.path.isfile(os.path.join(base, name)), name
if os.environ.get("FAKE_TUNE_EXIT"):
    print("tune: error: %s: step 1: args: 4 given, the kernel takes 3" % spec_path, file=sys.stderr)
    sys.exit(int(os.environ["FAKE_TUNE_EXIT"]))
axes = spec["axis"]
configs = [dict(zip([a["name"] for a in axes], c)) for c in itertools.product(*[a.get("values", a.get("labels")) for a in axes])]
if "allowed_configs" in spec:
    allowed = open(os.path.join(base, spec["allowed_configs"])).read().split()
    configs = [c for c in configs if ",".join("%s=%s" % kv for kv in c.items()) in allowed]
if "--compile-only" in argv:
    for c in configs[:1]:
        print("FAILED %s:\nerror: no\n" % ",".join("%s=%s" % kv for kv in c.items()), file=sys.stderr)
    print("%s %s  (): %d raw configs, 0 rejected by constraints, %d compiled, 1 failed (0.1 s)"
          % (spec["name"], opt("--arch"), len(configs), len(configs) - 1))
    sys.exit(1)
if os.path.exists(opt("--db")):
    os.remove(opt("--db"))  # a fresh database per call: resuming is the engine's business
db = sqlite3.connect(opt("--db"))
db.executescript(os.environ["FAKE_TUNE_SCHEMA"])
db.execute("INSERT INTO devices VALUES (1, 'GPU-fake', 'Fake GPU', 9, 0)")
db.execute("INSERT INTO templates VALUES (1, ?, 'h', 's', 't')", (spec["name"],))
problem = spec["problems"][0]
key = ",".join(i for i in problem.split(",") if i.startswith("problem_size_x") or not i.endswith("=1"))
db.execute("INSERT INTO problems VALUES (1, ?, ?, 1, '', '{}', '')", (spec["name"], key))
db.execute("INSERT INTO runs VALUES (3, ?, 1, 1, ?, 0, '', '', '0.1.0-fake', 't', 't', 'done')",
           (spec["name"], opt("--strategy") or "bayes_opt"))
for i, c in enumerate(configs):
    ok = i > 0
    db.execute("INSERT INTO results (run_id, device_id, template_id, problem_id, config, config_json, status, "
               "time_ms_median, samples, compile_s, verify_s, benchmark_s, error, created_at) "
               "VALUES (3, 1, 1, 1, ?, ?, ?, ?, 10, 0.1, 0.0, 0.2, '', 't')",
               (",".join("%s=%s" % kv for kv in c.items()), json.dumps(c), "ok" if ok else "compile_error",
                1.0 / (i + 1) if ok else None))
db.commit()
sys.stderr.write("progress 1/2\rprogress 2/2\n")
print("run 3: %d evaluated, 0 already stored; measured copy bandwidth 0 GB/s" % len(configs))
'''


class TuneKernelWithFakeTune(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="cutune-test-")
        self.tune = os.path.join(self.folder, "tune")
        with open(self.tune, "w") as f:
            f.write(FAKE_TUNE.replace("PYTHON", sys.executable, 1))
        os.chmod(self.tune, os.stat(self.tune).st_mode | stat.S_IXUSR)
        self.log = os.path.join(self.folder, "argv.log")
        self.env = dict(os.environ, CUTUNE_TUNE=self.tune, FAKE_TUNE_LOG=self.log, FAKE_TUNE_SCHEMA=FAKE_SCHEMA)

    def tearDown(self):
        import shutil
        shutil.rmtree(self.folder, ignore_errors=True)

    def calls(self):
        with open(self.log) as f:
            return [json.loads(line) for line in f]

    def call(self, **kw):
        args, a, b = vector_add_args()
        call = dict(kernel_name="vector_add", kernel_source=VECTOR_ADD, problem_size=(1000, 1), arguments=args,
                    tune_params={"block_size_x": [64, 128, 256]}, answer=[a + b, None, None, None],
                    database=os.path.join(self.folder, "c.db"), quiet=True)
        call.update(kw)
        with patched_environ(self.env):
            return cutune.tune_kernel(**call)

    def test_results_env_and_arguments(self):
        results, env = self.call(strategy="random_sample", strategy_options={"max_fevals": 5}, iterations=7, seed=2,
                                 cache=os.path.join(self.folder, "kt"),
                                 metrics={"GB/s": "3 * 4 * 1000 / time / 1e6", "twice": lambda p: 2 * p["time"]})
        self.assertEqual([r["block_size_x"] for r in results], [64, 128, 256])
        self.assertEqual(results[0]["time"], "CompilationFailedConfig")
        self.assertEqual(results[1]["time"], 0.5)
        self.assertAlmostEqual(results[1]["GB/s"], 12000 / 0.5 / 1e6)
        self.assertEqual(results[1]["twice"], 1.0)
        self.assertNotIn("twice", results[0])  # metrics only for timed configs, as in Kernel Tuner
        self.assertTrue(results[1]["cutune"]["verified"])
        self.assertEqual(env["best_config"]["block_size_x"], 256)
        self.assertEqual((env["device_name"], env["device_uuid"], env["compute_capability"]), ("Fake GPU", "GPU-fake", "90"))
        self.assertEqual((env["run_id"], env["strategy"], env["cutune_version"]), (3, "random_sampling", "0.1.0-fake"))
        self.assertTrue(env["verified"])
        self.assertEqual(env["problem_key"], "problem_size_x=1000")
        tune_argv, export_argv = self.calls()
        self.assertEqual(tune_argv[0], "--kernel-file")
        for flag, value in [("--device", "0"), ("--db", os.path.join(self.folder, "c.db")), ("--strategy", "random_sampling"),
                            ("--max-evals", "5"), ("--samples", "7"), ("--seed", "2")]:
            self.assertEqual(tune_argv[tune_argv.index(flag) + 1], value, flag)
        self.assertIn("--quiet", tune_argv)
        self.assertEqual(export_argv, ["db", "export-kt", os.path.join(self.folder, "kt.json"), "--family", "vector_add",
                                       "--device", "GPU-fake", "--problem", "problem_size_x=1000", "--db",
                                       os.path.join(self.folder, "c.db")])
        self.assertEqual(env["cache"], os.path.join(self.folder, "kt.json"))

    def test_output_and_best_are_printed_unless_quiet(self):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            self.call(quiet=False, verbose=True)
        self.assertIn("run 3: 3 evaluated", out.getvalue())  # tune's own output, live
        self.assertIn("progress 1/2\rprogress 2/2", err.getvalue())  # '\r' redraws survive
        self.assertIn("block_size_x=64, time=CompilationFailedConfig", out.getvalue())  # verbose: every config
        self.assertIn("best performing configuration:\nblock_size_x=256, time=0.333ms", out.getvalue())
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            self.call(quiet=True)
        self.assertEqual(out.getvalue(), "")

    def test_labelled_values_and_python_restrictions_round_trip(self):
        results, env = self.call(tune_params={"block_size_x": [64, 128], "alpha": [0.5, 2.0]},
                                 restrictions=lambda p: p["alpha"] > 1 or p["block_size_x"] == 64)
        self.assertEqual([(r["block_size_x"], r["alpha"]) for r in results], [(64, 0.5), (64, 2.0), (128, 2.0)])

    def test_tune_errors_become_cutune_errors(self):
        self.env["FAKE_TUNE_EXIT"] = "2"
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            with self.assertRaises(CutuneError) as caught:
                self.call(quiet=False)
        self.assertRegex(str(caught.exception), r"^/.*/vector_add\.toml: step 1: args: 4 given, the kernel takes 3$")
        self.assertEqual(caught.exception.exit_code, 2)
        self.assertNotIn("tune: error:", err.getvalue())  # shown once, as the exception
        self.env["FAKE_TUNE_EXIT"] = "3"
        with self.assertRaises(CutuneError) as caught:
            self.call()
        self.assertEqual(caught.exception.exit_code, 3)

    def test_cache_file_of_someone_else_is_not_overwritten(self):
        path = os.path.join(self.folder, "theirs.json")
        with open(path, "w") as f:
            json.dump({"cache": {}}, f)
        with self.assertRaisesRegex(CutuneError, "not written by cutune"):
            self.call(cache=path)
        self.assertFalse(os.path.exists(self.log))  # refused before tuning

    def test_spec_dir_keeps_the_spec(self):
        keep = os.path.join(self.folder, "spec")
        self.call(spec_dir=keep)
        self.assertEqual(sorted(os.listdir(keep)), ["answer0.npy", "arg0.npy", "arg1.npy", "arg2.npy", "vector_add.cu",
                                                    "vector_add.toml"])

    def test_compile_only(self):
        results, env = self.call(compile_only=True, arch="sm_80")
        self.assertEqual(results, [])
        summary = env["compile_only"]
        self.assertEqual((summary["compiled"], summary["failed"], summary["ok"], summary["arch"]), (2, 1, False, "sm_80"))
        self.assertEqual(summary["failures"][0]["config"], "block_size_x=64")
        self.assertEqual(self.calls()[0][2:], ["--compile-only", "--arch", "sm_80"])
        with self.assertRaisesRegex(CutuneError, "sm_90"):
            self.call(compile_only=True, arch="90")


if __name__ == "__main__":
    unittest.main()
