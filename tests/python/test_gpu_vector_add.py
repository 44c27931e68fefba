#!/usr/bin/env python3
"""The Python package tuning real kernels on GPU 0, Kernel Tuner style, end to end.

Exits with 77 (ctest: skipped) when CUTUNE_TUNE is unset or there is no CUDA driver or GPU -- probed
with `tune --best --device 0 --db /nonexistent`, which exits 3 exactly then. Each test tunes into
its own database (and compile cache), so tests neither resume from nor disturb each other or the
user's results.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "examples", "python"))

import cutune  # noqa: E402

SKIPPED = 77
TUNE = os.environ.get("CUTUNE_TUNE")

VECTOR_ADD = """
__global__ void vector_add(float *c, float *a, float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
"""

BLOCK_SIZES = [64, 128, 256, 512, 1024]


def no_gpu():
    probe = subprocess.run([TUNE, "--best", "--device", "0", "--db", "/nonexistent"], capture_output=True, text=True)
    return probe.returncode == 3


class GpuTest(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="cutune-gpu-test-")
        self.db = os.path.join(self.folder, "cutune.db")
        self._cache = os.environ.get("CUTUNE_CACHE")
        os.environ["CUTUNE_CACHE"] = os.path.join(self.folder, "cubins")

    def tearDown(self):
        if self._cache is None:
            os.environ.pop("CUTUNE_CACHE", None)
        else:
            os.environ["CUTUNE_CACHE"] = self._cache
        shutil.rmtree(self.folder, ignore_errors=True)

    def vector_add(self, n=1 << 20, answer=True, **kw):
        rng = np.random.default_rng(7)
        a = rng.standard_normal(n).astype(np.float32)
        b = rng.standard_normal(n).astype(np.float32)
        c = np.zeros_like(a)
        call = dict(answer=[a + b, None, None, None] if answer else None, database=self.db, quiet=True)
        call.update(kw)
        source = call.pop("kernel_source", VECTOR_ADD)
        params = call.pop("tune_params", {"block_size_x": BLOCK_SIZES})
        return cutune.tune_kernel("vector_add", source, (n, 1), [c, a, b, np.int32(n)], params, **call)


class VectorAdd(GpuTest):
    def test_every_config_is_measured_and_verified(self):
        results, env = self.vector_add()
        self.assertEqual(sorted(r["block_size_x"] for r in results), BLOCK_SIZES)
        for r in results:
            self.assertIsInstance(r["time"], float, r)
            self.assertGreater(r["time"], 0)
            self.assertEqual(r["cutune"]["status"], "ok")
            self.assertTrue(r["cutune"]["verified"], r)
            self.assertGreaterEqual(r["cutune"]["samples"], 1)
            self.assertLessEqual(r["cutune"]["time_min"], r["time"])
            for key in ("compile_time", "verification_time", "benchmark_time"):
                self.assertGreaterEqual(r[key], 0)
        self.assertTrue(env["verified"])
        self.assertTrue(env["device_name"])
        self.assertTrue(env["device_uuid"])
        self.assertRegex(env["compute_capability"], r"^\d+$")
        self.assertEqual(env["best_config"], min(results, key=lambda r: r["time"]))
        self.assertEqual(env["database"], self.db)

    def test_a_second_call_resumes_from_the_database(self):
        first, env1 = self.vector_add()
        second, env2 = self.vector_add()
        self.assertNotEqual(env1["run_id"], env2["run_id"])
        self.assertEqual([r["cutune"]["config"] for r in first], [r["cutune"]["config"] for r in second])
        # Nothing was measured again: every result still belongs to the first run.
        self.assertEqual({r["cutune"]["run_id"] for r in second}, {env1["run_id"]})

    def test_without_an_answer_nothing_is_verified(self):
        results, env = self.vector_add(answer=False, tune_params={"block_size_x": [128, 256]})
        self.assertFalse(env["verified"])
        self.assertEqual(len(results), 2)
        self.assertTrue(all(isinstance(r["time"], float) and not r["cutune"]["verified"] for r in results))

    def test_a_wrong_answer_fails_every_config(self):
        n = 1 << 20
        rng = np.random.default_rng(3)
        a = rng.standard_normal(n).astype(np.float32)
        wrong = rng.standard_normal(n).astype(np.float32)
        results, _ = cutune.tune_kernel("vector_add", VECTOR_ADD, n, [np.zeros_like(a), a, a, np.int32(n)],
                                        {"block_size_x": [128, 256]}, answer=[wrong, None, None, None],
                                        database=self.db, quiet=True)
        self.assertEqual([r["time"] for r in results], ["RuntimeFailedConfig"] * 2)
        self.assertEqual({r["cutune"]["status"] for r in results}, {"wrong_result"})

    def test_float_parameters_reach_the_kernel_as_their_text(self):
        # scale > 1 keeps b; were labels passed as their index (0, 1), no config would.
        source = VECTOR_ADD.replace("a[i] + b[i]", "a[i] + b[i] * (scale > 1.0f ? 1.0f : 0.0f)")
        results, _ = self.vector_add(kernel_source=source, tune_params={"block_size_x": [256], "scale": [0.5, 2.0]},
                                     restrictions=lambda p: p["scale"] < 3)
        status = {r["scale"]: r["cutune"]["status"] for r in results}
        self.assertEqual(status, {0.5: "wrong_result", 2.0: "ok"})

    def test_kernel_tuner_cache_file(self):
        cache = os.path.join(self.folder, "vector_add_cache")
        results, env = self.vector_add(cache=cache)
        self.assertEqual(env["cache"], cache + ".json")
        with open(cache + ".json") as f:
            document = json.load(f)
        self.assertIn("cutune", document)
        self.assertEqual(len(document["cache"]), len(results))

    def test_the_example_script_runs_unchanged(self):
        env = dict(os.environ, CUTUNE_DB=self.db, PYTHONPATH=os.path.join(ROOT, "python"))
        run = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "python", "vector_add.py")],
                             capture_output=True, text=True, env=env, timeout=600)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertIn("best performing configuration:", run.stdout)
        self.assertRegex(run.stdout, r"best of 15 configs on .*: block_size_x=\d+")


class Convolution(GpuTest):
    def test_two_dimensional_convolution_example_kernel(self):
        import convolution  # examples/python/convolution.py, at a small size

        # 30 of the space's configs, drawn reproducibly: every compile unrolls a 17 x 17 filter.
        results, env = convolution.tune(96, 64, database=self.db, quiet=True, strategy="random_sample",
                                        strategy_options={"max_fevals": 30, "seed": 1})
        self.assertTrue(env["verified"])
        self.assertEqual(env["problem_key"], "problem_size_x=96,problem_size_y=64")
        self.assertEqual(len(results), 30)
        ok = [r for r in results if r["cutune"]["status"] == "ok"]
        self.assertGreater(len(ok), 10)
        self.assertTrue(all(r["cutune"]["verified"] for r in ok))
        for r in results:
            # Configs over the shared-memory restriction or with fewer than 32 threads never ran.
            self.assertGreaterEqual(r["block_size_x"] * r["block_size_y"], 32)
            self.assertLessEqual((r["block_size_y"] * r["tile_size_y"] + 16) * (r["block_size_x"] * r["tile_size_x"] + 16)
                                 * 4, 48 * 1024)
        # Resource limits may refuse a launch (Kernel Tuner skips those too); a wrong output may not.
        wrong = [r for r in results if r["cutune"]["status"] in ("wrong_result", "runtime_fault", "timeout")]
        self.assertEqual(wrong, [], [(r["cutune"]["config"], r["cutune"]["error"][:200]) for r in wrong])


if __name__ == "__main__":
    if not TUNE:
        print("skipped: CUTUNE_TUNE is not set (point it at a built tune)")
        sys.exit(SKIPPED)
    if no_gpu():
        print("skipped: no CUDA driver or GPU (tune --best --device 0 exits with code 3)")
        sys.exit(SKIPPED)
    result = unittest.main(exit=False, verbosity=2).result
    sys.exit(0 if result.wasSuccessful() else 1)
