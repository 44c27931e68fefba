#include <cub/device/device_reduce.cuh>

#include "cub_reduce.hpp"

namespace cutune::bench {
namespace {

template <class T>
cudaError_t reduce(void* temp, size_t& temp_bytes, const T* in, T* out, long long n, CubOp op, cudaStream_t stream) {
  switch (op) {
    case CubOp::min: return cub::DeviceReduce::Min(temp, temp_bytes, in, out, n, stream);
    case CubOp::max: return cub::DeviceReduce::Max(temp, temp_bytes, in, out, n, stream);
    default: return cub::DeviceReduce::Sum(temp, temp_bytes, in, out, n, stream);
  }
}

}  // namespace

CubReduce::CubReduce(const void* in, void* out, long long n, bool is_double, CubOp op)
    : in_(in), out_(out), n_(n), is_double_(is_double), op_(op) {
  dispatch(nullptr, temp_bytes_, nullptr);
  cudaMalloc(&temp_, temp_bytes_ ? temp_bytes_ : 1);  // a null pointer would ask CUB for the size again
}

CubReduce::~CubReduce() { cudaFree(temp_); }

cudaError_t CubReduce::dispatch(void* temp, size_t& temp_bytes, cudaStream_t stream) const {
  if (is_double_)
    return reduce(temp, temp_bytes, static_cast<const double*>(in_), static_cast<double*>(out_), n_, op_, stream);
  return reduce(temp, temp_bytes, static_cast<const float*>(in_), static_cast<float*>(out_), n_, op_, stream);
}

cudaError_t CubReduce::run(cudaStream_t stream) { return dispatch(temp_, temp_bytes_, stream); }

}  // namespace cutune::bench
