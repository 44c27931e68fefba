#include "cuda_driver.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <mutex>

namespace cutune::cuda {
namespace {

Driver load_driver() {
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) throw EnvironmentError("no CUDA driver found (libcuda.so.1 could not be loaded)");
  using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
  auto get_proc = reinterpret_cast<GetProcAddress>(dlsym(library, "cuGetProcAddress_v2"));
  if (!get_proc)
    throw EnvironmentError("the CUDA driver is too old for this build (needs CUDA " +
                           std::to_string(CUDA_VERSION / 1000) + " or newer)");
  Driver d;
#define CUTUNE_RESOLVE(name)                                                                                       \
  {                                                                                                                \
    void* pointer = nullptr;                                                                                       \
    CUdriverProcAddressQueryResult status{};                                                                       \
    if (get_proc(#name, &pointer, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS || !pointer) \
      throw EnvironmentError("the CUDA driver lacks " #name " (driver older than CUDA " +                          \
                             std::to_string(CUDA_VERSION / 1000) + "?)");                                          \
    d.name = reinterpret_cast<decltype(d.name)>(pointer);                                                          \
  }
  CUTUNE_DRIVER_FUNCTIONS(CUTUNE_RESOLVE)
#undef CUTUNE_RESOLVE
  const CUresult init = d.cuInit(0);
  if (init == CUDA_ERROR_NO_DEVICE) throw EnvironmentError("no CUDA device found (the driver sees no GPU)");
  if (init != CUDA_SUCCESS) {
    const char* name = nullptr;
    d.cuGetErrorName(init, &name);
    throw EnvironmentError(std::string("the CUDA driver failed to initialise: ") + (name ? name : "unknown error"));
  }
  return d;
}

}  // namespace

const Driver& driver() {
  // A failed load is remembered, so every later call reports the same one line.
  static std::once_flag once;
  static Driver loaded;
  static std::string failure;
  std::call_once(once, [] {
    try {
      loaded = load_driver();
    } catch (const Error& e) {
      failure = e.what();
    }
  });
  if (!failure.empty()) throw EnvironmentError(failure);
  return loaded;
}

std::string describe(CUresult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  try {
    driver().cuGetErrorName(result, &name);
    driver().cuGetErrorString(result, &text);
  } catch (...) {
  }
  return std::string(name ? name : "CUDA error " + std::to_string(static_cast<int>(result))) +
         (text ? std::string(" (") + text + ")" : std::string());
}

bool CudaError::poisons_context() const {
  switch (result) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
      return true;
    default:
      return false;
  }
}

void throw_cuda_error(CUresult result, const char* call, const char* file, int line) {
  throw CudaError(std::string(call) + " failed: " + describe(result) + " at " +
                      std::filesystem::path(file).filename().string() + ":" + std::to_string(line),
                  result);
}

}  // namespace cutune::cuda
