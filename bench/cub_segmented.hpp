#pragma once
// CUB's DeviceSegmentedReduce (Sum, Min, Max) over the resample family's windows: S series of
// P floats, windows of k points (the last of a series shorter), segment offsets computed on the
// fly. Compiled by nvcc on its own, like cub_scan.cu.
#include <cuda_runtime.h>

#include "cub_reduce.hpp"

namespace cutune::bench {

class CubSegmentedReduce {
 public:
  CubSegmentedReduce(const float* in, float* out, long long series, long long points, long long window, CubOp op);
  ~CubSegmentedReduce();
  CubSegmentedReduce(const CubSegmentedReduce&) = delete;  // owns CUB's temporary storage
  CubSegmentedReduce& operator=(const CubSegmentedReduce&) = delete;
  cudaError_t run(cudaStream_t stream);

 private:
  cudaError_t dispatch(void* temp, size_t& temp_bytes, cudaStream_t stream) const;
  const float* in_;
  float* out_;
  long long series_, points_, window_;
  CubOp op_;
  void* temp_ = nullptr;
  size_t temp_bytes_ = 0;
};

}  // namespace cutune::bench
