#pragma once
// CUB's DeviceScan doing compact_offsets: int32 starts/stops → int64 offsets, through a
// transform iterator. Compiled by nvcc on its own so the rest of bench/ stays plain C++20.
#include <cuda_runtime.h>

namespace cutune::bench {

class CubScan {
 public:
  CubScan(const int* starts, const int* stops, long long* out, long long n);
  ~CubScan();
  CubScan(const CubScan&) = delete;  // owns CUB's temporary storage
  CubScan& operator=(const CubScan&) = delete;
  cudaError_t run(cudaStream_t stream);

 private:
  const int* starts_;
  const int* stops_;
  long long* out_;
  long long n_;
  void* temp_ = nullptr;
  size_t temp_bytes_ = 0;
};

}  // namespace cutune::bench
