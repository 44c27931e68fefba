#!/usr/bin/env python3
"""A 2-D convolution tuned Kernel Tuner style, on cutune: only the import names cutune.

Run from the repository root after building:
    PYTHONPATH=python CUTUNE_TUNE=build/bin/tune python3 examples/python/convolution.py [WIDTH HEIGHT]

Tunes convolution.cu (beside this file) over block and tile sizes for a 17 x 17 filter held in
constant memory (cmem_args), with grid divisors over two parameters per dimension and a
restriction that keeps the staged tile within 48 KiB of shared memory; every config's output is
checked against a numpy reference. The default image is 4096 x 4096, as in Kernel Tuner's
example; smaller sizes are passed to the kernel as definitions.
"""

import os
import sys

import numpy

from cutune import tune_kernel  # with Kernel Tuner: from kernel_tuner import tune_kernel

FILTER = 17


def reference(input_image, filter_weights, width, height):
    """output[y, x] = sum over i, j of input[y + i, x + j] * filter[i, j], in float64."""
    padded = input_image.reshape(height + FILTER - 1, width + FILTER - 1).astype(numpy.float64)
    weights = filter_weights.reshape(FILTER, FILTER).astype(numpy.float64)
    out = numpy.zeros((height, width))
    for i in range(FILTER):
        for j in range(FILTER):
            out += padded[i:i + height, j:j + width] * weights[i, j]
    return out.astype(numpy.float32).reshape(-1)


def tune(width=4096, height=4096, **options):
    kernel_file = os.path.join(os.path.dirname(os.path.abspath(__file__)), "convolution.cu")
    problem_size = (width, height)

    output = numpy.zeros(width * height, dtype=numpy.float32)
    input_image = numpy.random.randn((width + FILTER - 1) * (height + FILTER - 1)).astype(numpy.float32)
    filter_weights = numpy.random.randn(FILTER * FILTER).astype(numpy.float32)
    cmem_args = {"d_filter": filter_weights}
    args = [output, input_image, filter_weights]
    answer = [reference(input_image, filter_weights, width, height), None, None]

    tune_params = dict()
    tune_params["block_size_x"] = [16 * i for i in range(1, 9)]
    tune_params["block_size_y"] = [2 ** i for i in range(6)]
    tune_params["tile_size_x"] = [2 ** i for i in range(3)]
    tune_params["tile_size_y"] = [2 ** i for i in range(3)]

    grid_div_x = ["block_size_x", "tile_size_x"]
    grid_div_y = ["block_size_y", "tile_size_y"]
    restrictions = ["(block_size_y * tile_size_y + 16) * (block_size_x * tile_size_x + 16) * 4 <= 48 * 1024",
                    "block_size_x * block_size_y >= 32"]
    compiler_options = ["-Dimage_width=%d" % width, "-Dimage_height=%d" % height]

    return tune_kernel("convolution_kernel", kernel_file, problem_size, args, tune_params, grid_div_x=grid_div_x,
                       grid_div_y=grid_div_y, restrictions=restrictions, answer=answer, atol=1e-3, cmem_args=cmem_args,
                       compiler_options=compiler_options, **options)


if __name__ == "__main__":
    size = [int(s) for s in sys.argv[1:3]] or [4096, 4096]
    results, env = tune(*size)
    timed = [r for r in results if isinstance(r["time"], float)]
    print("%d of %d configs ran and matched the reference" % (len(timed), len(results)))
