// The CUDA driver API as the example applications use it (examples/scan_app, examples/conv2d/app,
// examples/histogram/app), opened at run time.
//
// Why not cuda.h and -lcuda: the applications show what a program needs of cutune to use a
// results database, which is the lookup library and nothing else. So they build without the CUDA
// toolkit, and run on machines without a GPU or driver, where they still look their config up and
// say why they skipped the launch. The driver (libcuda.so.1, which comes with the GPU driver, not
// the toolkit) is therefore opened with dlopen, and only the handful of entry points the
// applications call are declared here, with the few types and enum values they need, as cuda.h
// defines them. Where cuda.h maps a name to a versioned symbol (cuMemAlloc -> cuMemAlloc_v2), the
// versioned one is bound, as a program compiled against cuda.h would.
//
// Header-only, C++17, POSIX (dlfcn.h; link ${CMAKE_DL_LIBS}). Everything is in namespace example,
// except the CU_CHECK macro.
#pragma once

#include <dlfcn.h>

#include <cstddef>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace example {

// ---- the driver API's types and constants, as in cuda.h -----------------------------------------

using CUresult = int;  // CUDA_SUCCESS is 0
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
constexpr int kComputeCapabilityMajor = 75, kComputeCapabilityMinor = 76;  // CUdevice_attribute
constexpr int kMaxDynamicSharedBytes = 8;                                  // CUfunction_attribute

// The entry points, bound by load(). The library stays open for the life of the process.
struct Driver {
  void* library = nullptr;
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDeviceGetCount)(int*) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDeviceGetName)(char*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetUuid)(unsigned char*, CUdevice) = nullptr;  // CUuuid is 16 bytes
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuModuleLoadData)(CUmodule*, const void*) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int) = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr*, std::size_t) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr) = nullptr;
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, std::size_t) = nullptr;
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, std::size_t) = nullptr;
  CUresult (*cuMemsetD32)(CUdeviceptr, unsigned, std::size_t) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*,
                             void**, void**) = nullptr;

  // Empty message: loaded, and there is a device. Otherwise why there is no usable driver, which
  // is no error for the applications: they look up without launching. A driver that lacks one of
  // the entry points throws std::runtime_error.
  std::string load() {
    library = dlopen("libcuda.so.1", RTLD_NOW);
    if (!library) return "libcuda.so.1 could not be loaded";
    const auto bind = [&](auto& function, const char* name) {
      function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(dlsym(library, name));
      if (!function) throw std::runtime_error(std::string("the driver lacks ") + name);
    };
    bind(cuInit, "cuInit");
    bind(cuDeviceGetCount, "cuDeviceGetCount");
    bind(cuDeviceGet, "cuDeviceGet");
    bind(cuDeviceGetName, "cuDeviceGetName");
    bind(cuDeviceGetUuid, "cuDeviceGetUuid_v2");
    bind(cuDeviceGetAttribute, "cuDeviceGetAttribute");
    bind(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    bind(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    bind(cuCtxSetCurrent, "cuCtxSetCurrent");
    bind(cuCtxSynchronize, "cuCtxSynchronize");
    bind(cuModuleLoadData, "cuModuleLoadData");
    bind(cuModuleUnload, "cuModuleUnload");
    bind(cuModuleGetFunction, "cuModuleGetFunction");
    bind(cuFuncSetAttribute, "cuFuncSetAttribute");
    bind(cuMemAlloc, "cuMemAlloc_v2");
    bind(cuMemFree, "cuMemFree_v2");
    bind(cuMemcpyHtoD, "cuMemcpyHtoD_v2");
    bind(cuMemcpyDtoH, "cuMemcpyDtoH_v2");
    bind(cuMemsetD32, "cuMemsetD32_v2");
    bind(cuLaunchKernel, "cuLaunchKernel");
    int count = 0;
    if (cuInit(0) != 0 || cuDeviceGetCount(&count) != 0) return "the CUDA driver found no usable device";
    if (count == 0) return "no CUDA device";
    return {};
  }
};

// Throws std::runtime_error naming the call when a driver call fails.
inline void check(CUresult result, const char* call) {
  if (result != 0) throw std::runtime_error(std::string(call) + " failed with CUDA error " + std::to_string(result));
}
#define CU_CHECK(call) ::example::check(call, #call)

// Device memory owned for the scope of the run.
class Buffer {
 public:
  Buffer(Driver& d, std::size_t bytes) : driver_(d) { CU_CHECK(driver_.cuMemAlloc(&pointer_, bytes)); }
  ~Buffer() { driver_.cuMemFree(pointer_); }
  Buffer(const Buffer&) = delete;  // owns the allocation
  Buffer& operator=(const Buffer&) = delete;
  CUdeviceptr get() const { return pointer_; }

 private:
  Driver& driver_;
  CUdeviceptr pointer_ = 0;
};

// A cubin loaded on a device: the device's primary context, retained and made current, and the
// module in it, both released at the end of the scope. Declare it before the Buffers of the run,
// so that they are freed while the context still lives.
class Module {
 public:
  Module(Driver& d, CUdevice device, const void* image) : driver_(d), device_(device) {
    CUcontext context = nullptr;
    CU_CHECK(driver_.cuDevicePrimaryCtxRetain(&context, device_));
    try {
      CU_CHECK(driver_.cuCtxSetCurrent(context));
      CU_CHECK(driver_.cuModuleLoadData(&module_, image));
    } catch (...) {
      driver_.cuDevicePrimaryCtxRelease(device_);
      throw;
    }
  }
  ~Module() {
    driver_.cuModuleUnload(module_);
    driver_.cuDevicePrimaryCtxRelease(device_);
  }
  Module(const Module&) = delete;  // owns the module and the context reference
  Module& operator=(const Module&) = delete;

  // The kernel `name`, allowed `dynamic_shared_bytes` of dynamic shared memory: above 48 KiB a
  // kernel must opt in with the attribute, so it is set whenever the launch uses any.
  CUfunction kernel(const char* name, unsigned dynamic_shared_bytes) const {
    CUfunction function = nullptr;
    CU_CHECK(driver_.cuModuleGetFunction(&function, module_, name));
    if (dynamic_shared_bytes > 0)
      CU_CHECK(driver_.cuFuncSetAttribute(function, kMaxDynamicSharedBytes, static_cast<int>(dynamic_shared_bytes)));
    return function;
  }

 private:
  Driver& driver_;
  CUdevice device_;
  CUmodule module_ = nullptr;
};

// A device as the driver describes it. The UUID is written as the tuner writes it when it stores
// results ("GPU-" and 16 bytes in hex, as nvidia-smi shows it), so that a lookup can match it.
struct Gpu {
  CUdevice device = 0;
  std::string name, uuid;
  int cc_major = 0, cc_minor = 0;
};

// The driver's 16 UUID bytes as text.
inline std::string uuid_text(const unsigned char* b) {
  char text[48];
  std::snprintf(text, sizeof text, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return text;
}

// Device 0 (the applications run on the first GPU), once load() has succeeded.
inline Gpu first_gpu(Driver& d) {
  Gpu gpu;
  char name[256] = {0};
  unsigned char uuid[16] = {0};
  CU_CHECK(d.cuDeviceGet(&gpu.device, 0));
  CU_CHECK(d.cuDeviceGetName(name, sizeof name, gpu.device));
  CU_CHECK(d.cuDeviceGetUuid(uuid, gpu.device));
  CU_CHECK(d.cuDeviceGetAttribute(&gpu.cc_major, kComputeCapabilityMajor, gpu.device));
  CU_CHECK(d.cuDeviceGetAttribute(&gpu.cc_minor, kComputeCapabilityMinor, gpu.device));
  gpu.name = name;
  gpu.uuid = uuid_text(uuid);
  return gpu;
}

}  // namespace example
