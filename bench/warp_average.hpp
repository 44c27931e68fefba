#pragma once
// The averaging half of the library pipeline the avgmatvec bench compares with: a warp per
// row of M contiguous floats, float4 loads, shuffle reduction (what one would write by hand
// before reaching for cuBLAS). Compiled by nvcc on its own, with a plain C++ interface.
#include <cuda_runtime.h>

namespace cutune::bench {

// avg[r] = mean of v[r*m .. r*m + m) for r < rows.
cudaError_t warp_average(const float* v, long long rows, int m, float* avg, cudaStream_t stream);

}  // namespace cutune::bench
