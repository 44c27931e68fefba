#pragma once
// CUB's DeviceReduce (Sum, Min, Max) over float or double, behind a plain C++ interface: nvcc
// compiles it on its own, so the rest of bench/ stays C++20 with the engine's headers.
#include <cuda_runtime.h>

namespace cutune::bench {

enum class CubOp { sum, min, max };

class CubReduce {
 public:
  // `in` and `out` are float* (or double* with is_double); n elements into one.
  CubReduce(const void* in, void* out, long long n, bool is_double, CubOp op);
  ~CubReduce();
  CubReduce(const CubReduce&) = delete;  // owns CUB's temporary storage
  CubReduce& operator=(const CubReduce&) = delete;
  cudaError_t run(cudaStream_t stream);

 private:
  cudaError_t dispatch(void* temp, size_t& temp_bytes, cudaStream_t stream) const;
  const void* in_;
  void* out_;
  long long n_;
  bool is_double_;
  CubOp op_;
  void* temp_ = nullptr;
  size_t temp_bytes_ = 0;
};

}  // namespace cutune::bench
