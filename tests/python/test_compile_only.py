"""The Python package through the real `tune --kernel-file ... --compile-only` (NVRTC, no GPU).

These check what only the engine can: that generated specs are accepted, that tune parameters
reach the kernel as Kernel Tuner defines them (labelled values as their text, not their index),
that the extern "C" wrapping, constant-memory initialisers and grid_size macros compile, that
Python restrictions arrive through allowed_configs, and that tune's bad-input errors become
CutuneError with tune's message. Needs CUTUNE_TUNE (ctest sets it to the built tune); skipped
without it.
"""

import os
import unittest

import numpy as np

import cutune
from cutune import CutuneError

TUNE = os.environ.get("CUTUNE_TUNE")

VECTOR_ADD = """
__global__ void vector_add(float *c, const float *a, const float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"""


def vector_add_args(n=4096):
    a = np.arange(n, dtype=np.float32)
    return [np.zeros_like(a), a, a.copy(), np.int32(n)]


@unittest.skipUnless(TUNE, "CUTUNE_TUNE is not set: point it at a built tune (build/bin/tune) to run these tests")
class CompileOnly(unittest.TestCase):
    def compile(self, **kw):
        call = dict(kernel_name="vector_add", kernel_source=VECTOR_ADD, problem_size=4096,
                    arguments=vector_add_args(), tune_params={"block_size_x": [32, 64, 128, 256]}, arch="sm_90")
        call.update(kw)
        return cutune.compile_kernel(**call)

    def test_vector_add_compiles(self):
        summary = self.compile(tune_params={"block_size_x": [32, 64, 128, 256, 1024, 2048]})
        self.assertTrue(summary["ok"], summary)
        # 2048 threads exceed sm_90's 1024 per block: Kernel Tuner skips such configs, and so do we.
        self.assertEqual((summary["compiled"], summary["failed"]), (5, 0), summary["output"])

    def test_failed_configs_are_reported_not_raised(self):
        code = VECTOR_ADD + 'static_assert(block_size_x != 64, "no 64");\n'
        summary = self.compile(kernel_source=code)
        self.assertFalse(summary["ok"])
        self.assertEqual((summary["compiled"], summary["failed"]), (3, 1), summary["output"])
        self.assertEqual([f["config"] for f in summary["failures"]], ["block_size_x=64"])

    def test_labelled_parameters_arrive_as_their_text(self):
        # Were labels passed as their index (0, 1), alpha would be 0 and 1 and real an integer.
        code = VECTOR_ADD + """
static_assert(alpha == 0.5f || alpha == 2.5f, "alpha arrives as Kernel Tuner's text");
typedef real real_type;
static_assert(sizeof(real_type) == (use_double ? 8 : 4), "real names a type");
static_assert(flag == true || flag == false, "Python bools arrive as True/False");
"""
        code = "#define True true\n#define False false\n" + code
        summary = self.compile(kernel_source=code,
                               tune_params={"block_size_x": [64], "alpha": [0.5, 2.5], "real": ["float", "double"],
                                            "use_double": [0, 1], "flag": [True, False]},
                               restrictions=["(real == 'double') == (use_double == 1)"])
        self.assertTrue(summary["ok"], summary)
        self.assertEqual(summary["compiled"], 8, summary["output"])

    def test_python_restrictions_go_through_allowed_configs(self):
        summary = self.compile(tune_params={"block_size_x": [32, 64, 128, 256], "unroll": [1, 2]},
                               restrictions=lambda p: p["block_size_x"] * p["unroll"] == 256)
        self.assertEqual((summary["compiled"], summary["failed"]), (2, 0), summary["output"])
        summary = self.compile(tune_params={"block_size_x": [32, 64, 128, 256], "unroll": [1, 2]},
                               restrictions=["block_size_x * unroll >= 256", "unroll % 2 == 0 or block_size_x == 256"])
        self.assertEqual((summary["compiled"], summary["failed"]), (3, 0), summary["output"])

    def test_two_dimensional_kernel_with_constant_memory(self):
        # No extern "C" (wrapped for us), a __constant__ filter from cmem_args, grid_size_x/y macros.
        code = """
__constant__ float d_filter[3 * 3];
__global__ void blur(float *out, const float *in, const float *filter) {
    static_assert(grid_size_x == (64 + block_size_x * tile_size_x - 1) / (block_size_x * tile_size_x), "grid x");
    static_assert(grid_size_y == (48 + block_size_y - 1) / block_size_y, "grid y");
    int x = blockIdx.x * block_size_x * tile_size_x + threadIdx.x;
    int y = blockIdx.y * block_size_y + threadIdx.y;
    for (int t = 0; t < tile_size_x; t++, x += block_size_x) {
        if (x >= 64 || y >= 48) continue;
        float sum = 0;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) sum += in[(y + i) * 66 + x + j] * d_filter[i * 3 + j];
        out[y * 64 + x] = sum;
    }
}
"""
        f = np.full(9, 1.0 / 9, dtype=np.float32)
        summary = self.compile(kernel_name="blur", kernel_source=code, problem_size=(64, 48),
                               arguments=[np.zeros(64 * 48, np.float32), np.ones(66 * 50, np.float32), f],
                               tune_params={"block_size_x": [16, 32], "block_size_y": [4, 8], "tile_size_x": [1, 2]},
                               grid_div_x=["block_size_x", "tile_size_x"], cmem_args={"d_filter": f},
                               smem_args={"size": "block_size_x * block_size_y * 4"})
        self.assertTrue(summary["ok"], summary)
        self.assertEqual(summary["compiled"], 8, summary["output"])

    def test_compiler_options_and_non_default_block_names(self):
        code = """
extern "C" __global__ void scale(float *c, int n) {
    static_assert(FACTOR == 3, "compiler options reach NVRTC");
    static_assert(block_size_y == 1 && block_size_z == 1, "untuned block sizes are defined, as Kernel Tuner does");
    int i = blockIdx.x * threads + threadIdx.x;
    if (i < n) c[i] *= FACTOR;
}
"""
        summary = self.compile(kernel_name="scale", kernel_source=code, arguments=[np.zeros(100, np.float32), np.int32(100)],
                               problem_size=100, tune_params={"threads": [32, 64]}, block_size_names=["threads"],
                               compiler_options=["-DFACTOR=3"])
        self.assertTrue(summary["ok"], summary)
        self.assertEqual(summary["compiled"], 2, summary["output"])

    def test_bad_input_raises_with_tunes_message(self):
        with self.assertRaises(CutuneError) as caught:
            self.compile(arguments=vector_add_args()[:3])  # the kernel takes 4 parameters
        self.assertEqual(caught.exception.exit_code, 2)
        message = str(caught.exception)
        self.assertNotIn("tune: error:", message)
        self.assertIn("vector_add.toml", message)
        self.assertEqual(len(message.splitlines()), 1)

    def test_tune_kernel_compile_only(self):
        results, env = cutune.tune_kernel("vector_add", VECTOR_ADD, 4096, vector_add_args(),
                                          {"block_size_x": [64, 128]}, compile_only=True, quiet=True)
        self.assertEqual(results, [])
        self.assertEqual((env["compile_only"]["compiled"], env["compile_only"]["failed"]), (2, 0))


if __name__ == "__main__":
    unittest.main()
