#pragma once
// The CUDA driver API, loaded at run time with dlopen so that `tune` starts (and --help, --list,
// compile-only and the db commands work) on machines with no GPU and no driver.
#include <cuda.h>

#include <string>

#include "core/error.hpp"

namespace cutune::cuda {

// One pointer per driver entry point we use, resolved through cuGetProcAddress for the
// CUDA version we were built against (so cuMemAlloc means cuMemAlloc_v2, and so on).
struct Driver {
// One entry point a line, left alone by clang-format (14 indents such a list further at every run).
// clang-format off
#define CUTUNE_DRIVER_FUNCTIONS(X) \
  X(cuInit) \
  X(cuDriverGetVersion) \
  X(cuGetErrorName) \
  X(cuGetErrorString) \
  X(cuDeviceGetCount) \
  X(cuDeviceGet) \
  X(cuDeviceGetName) \
  X(cuDeviceGetUuid) \
  X(cuDeviceGetAttribute) \
  X(cuDeviceTotalMem) \
  X(cuDevicePrimaryCtxRetain) \
  X(cuDevicePrimaryCtxRelease) \
  X(cuCtxSetCurrent) \
  X(cuMemHostRegister) \
  X(cuMemHostUnregister) \
  X(cuCtxSynchronize) \
  X(cuMemAlloc) \
  X(cuMemFree) \
  X(cuMemcpyHtoD) \
  X(cuMemcpyDtoH) \
  X(cuMemcpyDtoDAsync) \
  X(cuMemsetD8Async) \
  X(cuMemsetD32Async) \
  X(cuStreamWriteValue32) \
  X(cuStreamCreate) \
  X(cuStreamDestroy) \
  X(cuStreamSynchronize) \
  X(cuStreamQuery) \
  X(cuEventCreate) \
  X(cuEventDestroy) \
  X(cuEventRecord) \
  X(cuEventQuery) \
  X(cuEventSynchronize) \
  X(cuEventElapsedTime) \
  X(cuModuleLoadData) \
  X(cuModuleUnload) \
  X(cuModuleGetFunction) \
  X(cuFuncGetAttribute) \
  X(cuFuncSetAttribute) \
  X(cuLaunchKernel) \
  X(cuLaunchKernelEx) \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor)
// clang-format on
#define CUTUNE_DECLARE(name) decltype(&::name) name = nullptr;
  CUTUNE_DRIVER_FUNCTIONS(CUTUNE_DECLARE)
#undef CUTUNE_DECLARE
};

// The loaded driver, initialised once (cuInit included). Throws EnvironmentError with a short
// line when libcuda.so.1 is missing or cuInit fails (no GPU, driver too old).
const Driver& driver();

// "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory) at measure.cpp:42"
std::string describe(CUresult result);

struct CudaError : Error {
  CudaError(const std::string& message, CUresult code) : Error(message), result(code) {}
  CUresult result;
  // Sticky errors (illegal address, traps, …): the driver refuses all further work in this
  // process, so only a new process recovers (see worker.hpp).
  bool poisons_context() const;
};

[[noreturn]] void throw_cuda_error(CUresult result, const char* call, const char* file, int line);

}  // namespace cutune::cuda

// Checks one driver call; the error names the call, its file and line.
#define CUTUNE_CU(call_name, ...)                                                       \
  do {                                                                                  \
    const CUresult cutune_result_ = ::cutune::cuda::driver().call_name(__VA_ARGS__);    \
    if (cutune_result_ != CUDA_SUCCESS)                                                 \
      ::cutune::cuda::throw_cuda_error(cutune_result_, #call_name, __FILE__, __LINE__); \
  } while (0)
