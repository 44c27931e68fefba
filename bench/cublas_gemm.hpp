#pragma once
// cuBLAS SGEMM on row-major matrices with TF32 off: the fp32 baseline of the matmul and
// avgmatvec benches. Plain C++ (cuBLAS is a C API), so the benches stay C++20.
#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace cutune::bench {

class Cublas {
 public:
  // TF32 off twice over: NVIDIA_TF32_OVERRIDE=0 before the handle exists, and CUBLAS_DEFAULT_MATH,
  // which for fp32 never computes with fewer mantissa bits than fp32.
  Cublas();
  ~Cublas();
  Cublas(const Cublas&) = delete;  // owns the handle
  Cublas& operator=(const Cublas&) = delete;

  // Row-major C (m x n) = A (m x k) times B, where B is k x n, or with b_transposed the
  // transpose of an n x k matrix.
  void gemm(cudaStream_t stream, int m, int n, int k, const float* a, const float* b, bool b_transposed, float* c);

 private:
  cublasHandle_t handle_ = nullptr;
};

}  // namespace cutune::bench
