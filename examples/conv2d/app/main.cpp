// An application of the conv2d kernel spec (../conv2d.toml): it asks cutune::lookup for the best
// conv2d config for its device and image, and, when there is a GPU and the database holds a
// cubin for its architecture, convolves its own image with it and checks the result on the CPU.
//
//   conv2d_app --db cutune.db [--height 2160 --width 3840 --radius 2] [--device-name NAME --cc 9.0]
//
// Without a GPU it still looks up and prints the config and plan; --device-name and --cc then
// say which device to ask for. The CUDA driver is loaded with dlopen, so the application builds
// and runs without the CUDA toolkit, and needs nothing of cutune but the lookup library.
//
// The radius is part of the lookup's exact match: the stored cubin was compiled for it (the spec
// passes it as -DRADIUS). Height and width are kernel arguments, so one cubin serves every image
// size; only the grid is recomputed here, from the config's block and tile sizes.
#include <dlfcn.h>

#include <cmath>
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

struct Image {
  int height = 0, width = 0, radius = 0;
  int taps() const { return 2 * radius + 1; }
};

// Pixels and taps in [0, 1), as the spec's inputs: all products are >= 0, which the check's
// relative bound needs.
std::vector<float> random_values(std::size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(0.0f, 1.0f);
  std::vector<float> values(count);
  for (float& v : values) v = value(rng);
  return values;
}

// The zero-padded "same" convolution in double: exact to ~2^-53 relative, so each float result
// may differ from it by gamma_m (m = F*F products, one rounding each; see ../conv2d.toml).
bool matches_cpu(const Image& p, const std::vector<float>& image, const std::vector<float>& filter,
                 const std::vector<float>& gpu) {
  const int f = p.taps();
  const double u = std::ldexp(1.0, -24), m = static_cast<double>(f) * f;
  const double rtol = m * u / (1 - m * u) + 1e-12;
  std::int64_t bad = 0;
  for (int y = 0; y < p.height; ++y)
    for (int x = 0; x < p.width; ++x) {
      double sum = 0;
      for (int i = 0; i < f; ++i)
        for (int j = 0; j < f; ++j) {
          const int yy = y + i - p.radius, xx = x + j - p.radius;
          if (yy >= 0 && yy < p.height && xx >= 0 && xx < p.width)
            sum += static_cast<double>(filter[i * f + j]) * image[static_cast<std::size_t>(yy) * p.width + xx];
        }
      const float got = gpu[static_cast<std::size_t>(y) * p.width + x];
      if (!(std::fabs(got - sum) <= rtol * sum) && bad++ < 3)
        std::printf("gpu        output (%d, %d) is %.9g, the CPU's %.9g\n", y, x, got, sum);
    }
  return bad == 0;
}

// Runs the config's plan (the spec's one launch) on this image and compares with the CPU.
bool run_on_gpu(Driver& d, CUdevice device, const cutune::lookup::Match& match, const cutune::lookup::Cubin& cubin,
                const Image& p) {
  const auto bx = static_cast<unsigned>(match.integer("block_size_x"));
  const auto by = static_cast<unsigned>(match.integer("block_size_y"));
  const auto tx = static_cast<unsigned>(match.integer("tile_size_x"));
  const auto ty = static_cast<unsigned>(match.integer("tile_size_y"));
  const bool staged = match.integer("use_shared") != 0;
  const unsigned f = p.taps(), halo = 2 * p.radius;
  // As the spec's step: the filter, then (use_shared) the block's input window.
  const unsigned shared = (f * f + (staged ? (bx * tx + halo) * (by * ty + halo) : 0)) * sizeof(float);
  const unsigned grid_x = (p.width + bx * tx - 1) / (bx * tx), grid_y = (p.height + by * ty - 1) / (by * ty);

  CUcontext context = nullptr;
  CHECK(d.cuDevicePrimaryCtxRetain(&context, device));
  CHECK(d.cuCtxSetCurrent(context));
  CUmodule module = nullptr;
  CHECK(d.cuModuleLoadData(&module, cubin.image.data()));
  bool ok = false;
  {
    const std::size_t pixels = static_cast<std::size_t>(p.height) * p.width;
    const auto image = random_values(pixels, 2026), filter = random_values(std::size_t(f) * f, 7);
    Buffer in(d, pixels * 4), taps(d, filter.size() * 4), out(d, pixels * 4);
    CHECK(d.cuMemcpyHtoD(in.get(), image.data(), pixels * 4));
    CHECK(d.cuMemcpyHtoD(taps.get(), filter.data(), filter.size() * 4));
    CUfunction kernel = nullptr;
    CHECK(d.cuModuleGetFunction(&kernel, module, "conv2d"));
    CHECK(d.cuFuncSetAttribute(kernel, kMaxDynamicSharedBytes, static_cast<int>(shared)));  // above 48 KiB: opt in
    CUdeviceptr image_ptr = in.get(), filter_ptr = taps.get(), output_ptr = out.get();
    int height = p.height, width = p.width;
    void* args[] = {&image_ptr, &filter_ptr, &height, &width, &output_ptr};
    std::printf("run        conv2d grid %u,%u block %u,%u shared %u B\n", grid_x, grid_y, bx, by, shared);
    CHECK(d.cuLaunchKernel(kernel, grid_x, grid_y, 1, bx, by, 1, shared, nullptr, args, nullptr));
    CHECK(d.cuCtxSynchronize());
    std::vector<float> gpu(pixels);
    CHECK(d.cuMemcpyDtoH(gpu.data(), out.get(), pixels * 4));
    ok = matches_cpu(p, image, filter, gpu);
    std::printf("gpu        %s: %zu outputs %s the CPU's\n", ok ? "verified" : "FAILED", pixels,
                ok ? "within gamma_F*F of" : "differ from");
  }
  d.cuModuleUnload(module);
  d.cuDevicePrimaryCtxRelease(device);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::string database, device_name, cc;
  Image p{2160, 3840, 2};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string option = argv[i];
    if (option == "--db") database = argv[i + 1];
    else if (option == "--height") p.height = std::stoi(argv[i + 1]);
    else if (option == "--width") p.width = std::stoi(argv[i + 1]);
    else if (option == "--radius") p.radius = std::stoi(argv[i + 1]);
    else if (option == "--device-name") device_name = argv[i + 1];
    else if (option == "--cc") cc = argv[i + 1];
    else return std::fprintf(stderr, "conv2d_app: unknown option %s\n", option.c_str()), 2;
  }
  if (database.empty() || p.height <= 0 || p.width <= 0 || p.radius < 0)
    return std::fprintf(stderr, "usage: conv2d_app --db PATH [--height H --width W --radius R] [--device-name NAME --cc 9.0]\n"), 2;

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
        return std::fprintf(stderr, "conv2d_app: --cc must look like 9.0\n"), 2;
    }
    std::printf("device     %s\n", no_gpu.empty() ? (identity.name + " (" + identity.uuid + ")").c_str()
                                                  : ("none: " + no_gpu + "; asking for '" + identity.name + "'").c_str());

    cutune::lookup::Database results(database);
    // The spec's fields: the extents give the size (size 0: their product), radius and type must match.
    const cutune::lookup::Query query{"conv2d",
                                      identity,
                                      {0,
                                       "float32",
                                       {{"height", std::to_string(p.height)},
                                        {"width", std::to_string(p.width)},
                                        {"radius", std::to_string(p.radius)}}}};
    const auto match = results.find(query);
    std::printf("level      %d (%s): %s\n", static_cast<int>(match->level), cutune::lookup::to_string(match->level),
                match->basis.c_str());
    std::printf("config     %s\n", match->config.c_str());
    if (match->result_id)
      std::printf("measured   %s (matched on %s), %.4f ms on %s; size distance %.3f\n", match->matched_problem.c_str(),
                  match->match_key.c_str(), *match->time_ms, match->device_name.c_str(), match->size_distance);
    std::printf("plan       as measured (grids for the matched size; this app sizes its own):\n");
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
      std::printf("cubin      none for %s: %s; skipped the launch (an application would compile ../conv2d.cu with "
                  "NVRTC here)\n",
                  arch.c_str(), cubin.reason.c_str());
      return 0;
    }
    std::printf("cubin      %zu bytes for %s\n", cubin.image.size(), cubin.arch.c_str());
    return run_on_gpu(driver, device, *match, cubin, p) ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "conv2d_app: %s\n", e.what());
    return 1;
  }
}
