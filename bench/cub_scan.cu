#include <cub/device/device_scan.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "cub_scan.hpp"

namespace cutune::bench {
namespace {

struct Length {
  const int* starts;
  const int* stops;
  __host__ __device__ long long operator()(long long i) const { return (long long)stops[i] - (long long)starts[i]; }
};

auto lengths(const int* starts, const int* stops) {
  return thrust::make_transform_iterator(thrust::make_counting_iterator<long long>(0), Length{starts, stops});
}

}  // namespace

CubScan::CubScan(const int* starts, const int* stops, long long* out, long long n)
    : starts_(starts), stops_(stops), out_(out), n_(n) {
  cub::DeviceScan::InclusiveSum(nullptr, temp_bytes_, lengths(starts_, stops_), out_ + 1, n_);
  cudaMalloc(&temp_, temp_bytes_);
}

CubScan::~CubScan() { cudaFree(temp_); }

cudaError_t CubScan::run(cudaStream_t stream) {
  // tooffsets[0] = 0, then the inclusive sums of the lengths from tooffsets[1].
  if (cudaError_t e = cudaMemsetAsync(out_, 0, sizeof(long long), stream)) return e;
  return cub::DeviceScan::InclusiveSum(temp_, temp_bytes_, lengths(starts_, stops_), out_ + 1, n_, stream);
}

}  // namespace cutune::bench
