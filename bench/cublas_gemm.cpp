#include "cublas_gemm.hpp"

#include <cstdlib>
#include <string>

#include "core/error.hpp"

namespace cutune::bench {
namespace {

void check(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw Error(std::string(call) + " failed: cuBLAS status " + std::to_string(status));
}

}  // namespace

Cublas::Cublas() {
  setenv("NVIDIA_TF32_OVERRIDE", "0", 1);
  check(cublasCreate(&handle_), "cublasCreate");
  check(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
}

Cublas::~Cublas() { cublasDestroy(handle_); }

void Cublas::gemm(cudaStream_t stream, int m, int n, int k, const float* a, const float* b, bool b_transposed,
                  float* c) {
  // cuBLAS is column-major, and a row-major matrix is its transpose there: C^T = B^T A^T is a
  // column-major (n x m) product of B's storage (op N, or op T when b_transposed) and A's.
  const float one = 1.0f, zero = 0.0f;
  check(cublasSetStream(handle_, stream), "cublasSetStream");
  check(cublasSgemm(handle_, b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b,
                    b_transposed ? k : n, a, k, &zero, c, n),
        "cublasSgemm");
}

}  // namespace cutune::bench
