// An application that uses a cutune results database: it asks cutune::lookup for the best scan
// (compact_offsets) config for its device and problem size, and, when there is a GPU and the
// database holds a cubin for it, launches that kernel on its own data and checks the result.
//
//   scan_app --db cutune.db [--n 1000000] [--device-name NAME --cc 9.0]
//
// Without a GPU it still looks up and prints the config; --device-name and --cc then say which
// device to ask for. The CUDA driver is loaded with dlopen, so the application builds and runs
// without the CUDA toolkit, and needs nothing of cutune but the lookup library.
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <cutune/lookup.hpp>

namespace {

// ---- the few driver API entry points the application needs, without cuda.h ----------------------

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
constexpr int kComputeCapabilityMajor = 75, kComputeCapabilityMinor = 76;  // CUdevice_attribute
constexpr int kMaxDynamicSharedBytes = 8;                                   // CUfunction_attribute

struct Driver {
  void* library = nullptr;
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetName)(char*, int, CUdevice);
  CUresult (*cuDeviceGetUuid)(unsigned char*, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuModuleLoadData)(CUmodule*, const void*);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuMemAlloc)(CUdeviceptr*, std::size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, std::size_t);
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, std::size_t);
  CUresult (*cuMemsetD32)(CUdeviceptr, unsigned, std::size_t);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*,
                             void**, void**);

  // Empty message: loaded. Otherwise why there is no usable driver.
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

void check(CUresult result, const char* call) {
  if (result != 0) throw std::runtime_error(std::string(call) + " failed with CUDA error " + std::to_string(result));
}
#define CHECK(call) check(call, #call)

// Device memory owned for the scope of the run.
class Buffer {
 public:
  Buffer(Driver& d, std::size_t bytes) : driver_(d) { CHECK(driver_.cuMemAlloc(&pointer_, bytes)); }
  ~Buffer() { driver_.cuMemFree(pointer_); }
  Buffer(const Buffer&) = delete;  // owns the allocation
  Buffer& operator=(const Buffer&) = delete;
  CUdeviceptr get() const { return pointer_; }

 private:
  Driver& driver_;
  CUdeviceptr pointer_ = 0;
};

// ---- the application's own problem --------------------------------------------------------------

struct Lists {
  std::vector<std::int32_t> starts, stops;
};

Lists make_lists(std::int64_t n) {
  Lists lists{std::vector<std::int32_t>(n), std::vector<std::int32_t>(n)};
  std::mt19937 rng(2026);
  std::uniform_int_distribution<std::int32_t> position(0, 999'999), length(0, 31);
  for (std::int64_t i = 0; i < n; ++i) {
    lists.starts[i] = position(rng);
    lists.stops[i] = lists.starts[i] + length(rng);
  }
  return lists;
}

std::vector<std::int64_t> offsets_on_cpu(const Lists& lists) {
  std::vector<std::int64_t> offsets(lists.starts.size() + 1, 0);
  for (std::size_t i = 0; i < lists.starts.size(); ++i) offsets[i + 1] = offsets[i] + (lists.stops[i] - lists.starts[i]);
  return offsets;
}

unsigned shared_bytes_of(const cutune::lookup::Cubin& cubin, const std::string& kernel) {
  for (const auto& launch : cubin.launches)
    if (launch.kernel == kernel) return launch.dynamic_shared_bytes;
  return 0;
}

// Runs the config's launch plan (as the scan family defines it) and compares with the CPU.
bool run_on_gpu(Driver& d, CUdevice device, const cutune::lookup::Match& match, const cutune::lookup::Cubin& cubin,
                std::int64_t n) {
  CUcontext context = nullptr;
  CHECK(d.cuDevicePrimaryCtxRetain(&context, device));
  CHECK(d.cuCtxSetCurrent(context));
  CUmodule module = nullptr;
  CHECK(d.cuModuleLoadData(&module, cubin.image.data()));
  bool ok = false;
  {
    const Lists lists = make_lists(n);
    const auto block = static_cast<unsigned>(match.integer("block"));
    const std::int64_t tile = match.integer("block") * match.integer("ept");
    long long tiles = (n + tile - 1) / tile, size = n;
    Buffer starts(d, n * 4), stops(d, n * 4), offsets(d, (n + 1) * 8), error(d, 8), scratch(d, (tiles + 2) * 8);
    CHECK(d.cuMemcpyHtoD(starts.get(), lists.starts.data(), n * 4));
    CHECK(d.cuMemcpyHtoD(stops.get(), lists.stops.data(), n * 4));
    CHECK(d.cuMemsetD32(error.get(), 0xffffffffu, 2));
    const auto launch = [&](const char* name, unsigned grid, std::vector<void*> args) {
      CUfunction f = nullptr;
      CHECK(d.cuModuleGetFunction(&f, module, name));
      const unsigned shared = shared_bytes_of(cubin, name);
      if (shared > 0) CHECK(d.cuFuncSetAttribute(f, kMaxDynamicSharedBytes, static_cast<int>(shared)));
      CHECK(d.cuLaunchKernel(f, grid, 1, 1, block, 1, 1, shared, nullptr, args.data(), nullptr));
    };
    CUdeviceptr s = starts.get(), t = stops.get(), out = offsets.get(), e = error.get(), state = scratch.get();
    CUdeviceptr counter = state + tiles * 8;
    if (match.parameter("algo")->value == "lookback") {
      CHECK(d.cuMemsetD32(state, 0, (tiles + 2) * 2));
      launch("scan_lookback", static_cast<unsigned>(tiles), {&s, &t, &size, &state, &counter, &out, &e});
    } else {  // blelloch and warp: tile sums, their scan in one block, then each tile again
      launch("scan_tile_sums", static_cast<unsigned>(tiles), {&s, &t, &size, &state, &e});
      launch("scan_tile_offsets", 1, {&state, &tiles});
      launch("scan_tiles", static_cast<unsigned>(tiles), {&s, &t, &size, &state, &out});
    }
    CHECK(d.cuCtxSynchronize());
    std::vector<std::int64_t> gpu(n + 1);
    std::uint64_t bad = 0;
    CHECK(d.cuMemcpyDtoH(gpu.data(), out, (n + 1) * 8));
    CHECK(d.cuMemcpyDtoH(&bad, e, 8));
    const auto cpu = offsets_on_cpu(lists);
    ok = bad == ~0ull && gpu == cpu;
    std::printf("gpu        %s: %lld offsets %s the CPU's\n", ok ? "verified" : "FAILED", static_cast<long long>(n + 1),
                ok ? "equal" : "differ from");
  }
  d.cuModuleUnload(module);
  d.cuDevicePrimaryCtxRelease(device);
  return ok;
}

std::string uuid_text(const unsigned char* b) {
  char text[48];
  std::snprintf(text, sizeof text, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  std::string database, device_name, cc;
  std::int64_t n = 1'000'000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string option = argv[i];
    if (option == "--db") database = argv[i + 1];
    else if (option == "--n") n = std::stoll(argv[i + 1]);
    else if (option == "--device-name") device_name = argv[i + 1];
    else if (option == "--cc") cc = argv[i + 1];
    else return std::fprintf(stderr, "scan_app: unknown option %s\n", option.c_str()), 2;
  }
  if (database.empty() || n <= 0) return std::fprintf(stderr, "usage: scan_app --db PATH [--n N] [--device-name NAME --cc 9.0]\n"), 2;

  try {
    Driver driver;
    const std::string no_gpu = driver.load();
    CUdevice device = 0;
    cutune::lookup::DeviceIdentity identity;
    if (no_gpu.empty()) {
      char name[256] = {0};
      unsigned char uuid[16] = {0};
      CHECK(driver.cuDeviceGet(&device, 0));
      CHECK(driver.cuDeviceGetName(name, sizeof name, device));
      CHECK(driver.cuDeviceGetUuid(uuid, device));
      CHECK(driver.cuDeviceGetAttribute(&identity.cc_major, kComputeCapabilityMajor, device));
      CHECK(driver.cuDeviceGetAttribute(&identity.cc_minor, kComputeCapabilityMinor, device));
      identity.name = name;
      identity.uuid = uuid_text(uuid);
    } else {
      identity.name = device_name;
      if (!cc.empty() && std::sscanf(cc.c_str(), "%d.%d", &identity.cc_major, &identity.cc_minor) != 2)
        return std::fprintf(stderr, "scan_app: --cc must look like 9.0\n"), 2;
    }
    std::printf("device     %s\n", no_gpu.empty() ? (identity.name + " (" + identity.uuid + ")").c_str()
                                                  : ("none: " + no_gpu + "; asking for '" + identity.name + "'").c_str());

    cutune::lookup::Database results(database);
    const cutune::lookup::Query query{"scan", identity, {n, "int32"}};
    const auto match = results.find(query);
    std::printf("level      %d (%s): %s\n", static_cast<int>(match->level), cutune::lookup::to_string(match->level),
                match->basis.c_str());
    std::printf("config     %s\n", match->config.c_str());
    for (const auto& p : match->parameters) std::printf("  %-8s %s\n", p.name.c_str(), p.value.c_str());
    if (match->result_id)
      std::printf("measured   %s, %.4f ms on %s; size distance %.3f\n", match->matched_problem.c_str(), *match->time_ms,
                  match->device_name.c_str(), match->size_distance);
    for (const auto& l : match->launches)
      std::printf("launch     %s grid %u block %u shared %u B (grid as measured; this app sizes its own)\n",
                  l.kernel.c_str(), l.grid[0], l.block[0], l.dynamic_shared_bytes);

    if (identity.cc_major == 0) {
      std::printf("cubin      not asked for: the device's architecture is unknown\n");
      return 0;
    }
    const std::string arch = cutune::lookup::arch_of(identity.cc_major, identity.cc_minor);
    const auto cubin = results.cubin(query, arch);
    if (!cubin) {
      std::printf("cubin      none for %s: %s (an application would compile the template with NVRTC here)\n",
                  arch.c_str(), cubin.reason.c_str());
      return 0;
    }
    std::printf("cubin      %zu bytes for %s\n", cubin.image.size(), cubin.arch.c_str());
    if (!no_gpu.empty()) {
      std::printf("gpu        skipped: %s\n", no_gpu.c_str());
      return 0;
    }
    return run_on_gpu(driver, device, *match, cubin, n) ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scan_app: %s\n", e.what());
    return 1;
  }
}
