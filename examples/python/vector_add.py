#!/usr/bin/env python3
"""Kernel Tuner's minimal example, on cutune: the import is the only line that differs.

Run from the repository root after building:
    PYTHONPATH=python CUTUNE_TUNE=build/bin/tune python3 examples/python/vector_add.py
(after `cmake --install`, the installed package finds <prefix>/bin/tune by itself).

Tunes vector_add over block_size_x on GPU 0, checks every config's output against a + b, and
prints the best config. Results go to cutune's database ($CUTUNE_DB, else
~/.local/share/cutune/cutune.db): a second run resumes and measures nothing again.
"""

import numpy

from cutune import tune_kernel  # with Kernel Tuner: from kernel_tuner import tune_kernel


def tune():
    kernel_string = """
    __global__ void vector_add(float *c, float *a, float *b, int n) {
        int i = blockIdx.x * block_size_x + threadIdx.x;
        if (i < n) {
            c[i] = a[i] + b[i];
        }
    }
    """

    size = 10000000
    problem_size = (size, 1)

    a = numpy.random.randn(size).astype(numpy.float32)
    b = numpy.random.randn(size).astype(numpy.float32)
    c = numpy.zeros_like(b)
    n = numpy.int32(size)

    args = [c, a, b, n]
    answer = [a + b, None, None, None]  # c is checked for every config; None: not an output

    tune_params = dict()
    tune_params["block_size_x"] = [128 + 64 * i for i in range(15)]

    results, env = tune_kernel("vector_add", kernel_string, problem_size, args, tune_params, answer=answer)

    timed = [r for r in results if isinstance(r["time"], float)]
    best = min(timed, key=lambda r: r["time"])
    print("best of %d configs on %s: block_size_x=%d, %.4f ms" % (len(timed), env["device_name"], best["block_size_x"],
                                                                 best["time"]))
    return results, env


if __name__ == "__main__":
    tune()
