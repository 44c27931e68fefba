// An application of the histogram kernel spec (../histogram.toml): it asks cutune::lookup for the
// best histogram config for its device, value count, bin count and value type, and, when there is
// a GPU and the database holds a cubin for its architecture, runs the config's plan (zero the
// counts, then count) on its own values and checks the counts against the CPU's.
//
//   histogram_app --db cutune.db [--n 10000000 --bins 256 --type uint32] [--device-name NAME --cc 9.0]
//
// Without a GPU it still looks up and prints the config and plan; --device-name and --cc then
// say which device to ask for. The CUDA driver is loaded with dlopen, so the application builds
// and runs without the CUDA toolkit, and needs nothing of cutune but the lookup library.
//
// Bins and type are part of the lookup's exact match: the stored cubin was compiled for them (the
// spec passes them as -DBINS and -DELEMENT_TYPE). n is a kernel argument, so one cubin serves
// every size; only the grid and the memset are recomputed here, from the config and the problem.
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>
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

std::string uuid_text(const unsigned char* b) {
  char text[48];
  std::snprintf(text, sizeof text, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return text;
}

void print_plan(const std::vector<cutune::lookup::Step>& steps) {
  for (const auto& step : steps) {
    if (const auto* l = std::get_if<cutune::lookup::Launch>(&step))
      std::printf("  launch   %s grid %u,%u,%u block %u,%u,%u shared %u B\n", l->kernel.c_str(), l->grid[0], l->grid[1],
                  l->grid[2], l->block[0], l->block[1], l->block[2], l->dynamic_shared_bytes);
    else {
      const auto& m = std::get<cutune::lookup::Memset>(step);
      std::printf("  memset   %s word 0x%08x, %lld B at +%lld%s\n", m.buffer.c_str(), m.word, static_cast<long long>(m.bytes),
                  static_cast<long long>(m.byte_offset), m.stream_write ? " (stream writes)" : "");
    }
  }
}

// ---- the application's own problem --------------------------------------------------------------

struct Problem {
  std::int64_t n = 10'000'000;
  unsigned bins = 256;
  std::string type = "uint32";  // or int32: the values below are >= 0, so their bits are the same
};

// Values in [0, 2^24), as the spec's inputs.
std::vector<std::uint32_t> random_values(std::int64_t n) {
  std::mt19937 rng(2026);
  std::uniform_int_distribution<std::uint32_t> value(0, (1u << 24) - 1);
  std::vector<std::uint32_t> values(n);
  for (auto& v : values) v = value(rng);
  return values;
}

// Runs the config's plan, as the spec's steps: zero the counts, then one launch.
bool run_on_gpu(Driver& d, CUdevice device, const cutune::lookup::Match& match, const cutune::lookup::Cubin& cubin,
                const Problem& p) {
  const auto block = static_cast<unsigned>(match.integer("block_size_x"));
  const std::int64_t tile = match.integer("block_size_x") * match.integer("items_per_thread");
  const bool shared_counters = match.parameter("counters")->value == "shared";
  const unsigned shared = shared_counters ? static_cast<unsigned>(match.integer("replicas")) * p.bins * 4 : 0;
  const auto grid = static_cast<unsigned>((p.n + tile - 1) / tile);

  CUcontext context = nullptr;
  CHECK(d.cuDevicePrimaryCtxRetain(&context, device));
  CHECK(d.cuCtxSetCurrent(context));
  CUmodule module = nullptr;
  CHECK(d.cuModuleLoadData(&module, cubin.image.data()));
  bool ok = false;
  {
    const auto values = random_values(p.n);
    Buffer in(d, p.n * 4), out(d, p.bins * 4);
    CHECK(d.cuMemcpyHtoD(in.get(), values.data(), p.n * 4));
    CUfunction kernel = nullptr;
    CHECK(d.cuModuleGetFunction(&kernel, module, "histogram"));
    if (shared > 0) CHECK(d.cuFuncSetAttribute(kernel, kMaxDynamicSharedBytes, static_cast<int>(shared)));
    CUdeviceptr values_ptr = in.get(), counts_ptr = out.get();
    long long n = p.n;
    void* args[] = {&values_ptr, &n, &counts_ptr};
    std::printf("run        memset counts 0 (%u words), histogram grid %u block %u shared %u B\n", p.bins, grid, block,
                shared);
    CHECK(d.cuMemsetD32(counts_ptr, 0, p.bins));  // every variant adds into the counts
    CHECK(d.cuLaunchKernel(kernel, grid, 1, 1, block, 1, 1, shared, nullptr, args, nullptr));
    CHECK(d.cuCtxSynchronize());
    std::vector<std::uint32_t> gpu(p.bins), cpu(p.bins, 0);
    CHECK(d.cuMemcpyDtoH(gpu.data(), counts_ptr, p.bins * 4));
    for (const std::uint32_t v : values) ++cpu[v % p.bins];
    ok = gpu == cpu;
    std::printf("gpu        %s: %u counts %s the CPU's\n", ok ? "verified" : "FAILED", p.bins, ok ? "equal" : "differ from");
  }
  d.cuModuleUnload(module);
  d.cuDevicePrimaryCtxRelease(device);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::string database, device_name, cc;
  Problem p;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string option = argv[i];
    if (option == "--db") database = argv[i + 1];
    else if (option == "--n") p.n = std::stoll(argv[i + 1]);
    else if (option == "--bins") p.bins = static_cast<unsigned>(std::stoul(argv[i + 1]));
    else if (option == "--type") p.type = argv[i + 1];
    else if (option == "--device-name") device_name = argv[i + 1];
    else if (option == "--cc") cc = argv[i + 1];
    else return std::fprintf(stderr, "histogram_app: unknown option %s\n", option.c_str()), 2;
  }
  if (database.empty() || p.n <= 0 || p.bins == 0 || (p.type != "uint32" && p.type != "int32"))
    return std::fprintf(stderr, "usage: histogram_app --db PATH [--n N --bins B --type uint32|int32] [--device-name NAME "
                                "--cc 9.0]\n"),
           2;

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
        return std::fprintf(stderr, "histogram_app: --cc must look like 9.0\n"), 2;
    }
    std::printf("device     %s\n", no_gpu.empty() ? (identity.name + " (" + identity.uuid + ")").c_str()
                                                  : ("none: " + no_gpu + "; asking for '" + identity.name + "'").c_str());

    cutune::lookup::Database results(database);
    // The spec's fields: n is the extent (the size), bins and type must match exactly.
    const cutune::lookup::Query query{"histogram", identity, {p.n, p.type, {{"bins", std::to_string(p.bins)}}}};
    const auto match = results.find(query);
    std::printf("level      %d (%s): %s\n", static_cast<int>(match->level), cutune::lookup::to_string(match->level),
                match->basis.c_str());
    std::printf("config     %s\n", match->config.c_str());
    if (match->result_id)
      std::printf("measured   %s (matched on %s), %.4f ms on %s; size distance %.3f\n", match->matched_problem.c_str(),
                  match->match_key.c_str(), *match->time_ms, match->device_name.c_str(), match->size_distance);
    std::printf("plan       as measured (sizes for the matched problem; this app sizes its own):\n");
    print_plan(match->steps);

    if (!no_gpu.empty()) {
      if (identity.cc_major != 0) {
        const std::string arch = cutune::lookup::arch_of(identity.cc_major, identity.cc_minor);
        const auto cubin = results.cubin(query, arch);
        std::printf("cubin      %s\n", cubin ? (std::to_string(cubin.image.size()) + " bytes for " + cubin.arch).c_str()
                                             : ("none for " + arch + ": " + cubin.reason).c_str());
      }
      std::printf("no GPU: skipped the launch (%s)\n", no_gpu.c_str());
      return 0;
    }
    const std::string arch = cutune::lookup::arch_of(identity.cc_major, identity.cc_minor);
    const auto cubin = results.cubin(query, arch);
    if (!cubin) {
      std::printf("cubin      none for %s: %s; skipped the launch (an application would compile ../histogram.cu "
                  "with NVRTC here)\n",
                  arch.c_str(), cubin.reason.c_str());
      return 0;
    }
    std::printf("cubin      %zu bytes for %s\n", cubin.image.size(), cubin.arch.c_str());
    return run_on_gpu(driver, device, *match, cubin, p) ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "histogram_app: %s\n", e.what());
    return 1;
  }
}
