#include "warp_average.hpp"

namespace cutune::bench {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

__global__ void __launch_bounds__(kThreads) warp_average_rows(const float* __restrict__ v, long long rows, int m,
                                                              float* __restrict__ avg) {
  const long long row = (long long)blockIdx.x * kWarps + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const float* r = v + row * m;
  float sum = 0.0f;
  if (m % 4 == 0) {
    const float4* r4 = reinterpret_cast<const float4*>(r);
#pragma unroll 4
    for (int i = lane; i < m / 4; i += 32) {
      const float4 q = r4[i];
      sum += (q.x + q.y) + (q.z + q.w);
    }
  } else {
    for (int i = lane; i < m; i += 32) sum += r[i];
  }
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  if (lane == 0) avg[row] = sum / m;
}

}  // namespace

cudaError_t warp_average(const float* v, long long rows, int m, float* avg, cudaStream_t stream) {
  const long long blocks = (rows + kWarps - 1) / kWarps;
  warp_average_rows<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(v, rows, m, avg);
  return cudaGetLastError();
}

}  // namespace cutune::bench
