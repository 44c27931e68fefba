#include "output_check.hpp"

#include <map>
#include <mutex>

#include "compile.hpp"

namespace cutune {
namespace {

// One kernel per element type. Each thread walks its elements grid-stride; a warp raises a flag
// with one atomic when any lane saw a differing byte pattern or a broken rule. The rule is the one
// of compare_exact / compare_close (kernels/verify.hpp), in double.
constexpr const char* kSource = R"cu(
typedef unsigned int cutune_u32;
typedef unsigned long long cutune_u64;

template <class T, class Bits>
__device__ void cutune_check(const T* expected, const T* actual, long long n, int checked, int exact, double rtol,
                             double atol, cutune_u64* flags) {
  bool differs = false, breaks = false;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    const T e = expected[i], a = actual[i];
    differs |= *reinterpret_cast<const Bits*>(&e) != *reinterpret_cast<const Bits*>(&a);
    if (!checked) continue;
    if (exact) {
      breaks |= !(a == e);
    } else {
      const double de = (double)e, da = (double)a;
      breaks |= !(fabs(da - de) <= rtol * fabs(de) + atol);
    }
  }
  if (__any_sync(0xffffffffu, differs) && (threadIdx.x & 31) == 0) atomicOr(&flags[0], 1ull);
  if (__any_sync(0xffffffffu, breaks) && (threadIdx.x & 31) == 0) atomicOr(&flags[1], 1ull);
}

#define CUTUNE_CHECK_KERNEL(NAME, T, BITS)                                                                    \
  extern "C" __global__ void NAME(const T* e, const T* a, long long n, int checked, int exact, double rtol, \
                                  double atol, cutune_u64* flags) {                                          \
    cutune_check<T, BITS>(e, a, n, checked, exact, rtol, atol, flags);                                       \
  }
CUTUNE_CHECK_KERNEL(check_int32, int, cutune_u32)
CUTUNE_CHECK_KERNEL(check_uint32, unsigned int, cutune_u32)
CUTUNE_CHECK_KERNEL(check_int64, long long, cutune_u64)
CUTUNE_CHECK_KERNEL(check_uint64, unsigned long long, cutune_u64)
CUTUNE_CHECK_KERNEL(check_float32, float, cutune_u32)
CUTUNE_CHECK_KERNEL(check_float64, double, cutune_u64)
)cu";

constexpr unsigned kThreads = 256;

}  // namespace

const char* output_check_source() { return kSource; }

OutputChecker::OutputChecker(const std::string& arch) : flags_(2 * sizeof(std::uint64_t)) {
  // Through the compile cache: every worker process (one per tuning run) needs them.
  const Compiled compiled = CompileCache(CompileCache::default_folder()).compile_one({"cutune_output_check.cu", output_check_source(), {}, arch});
  if (!compiled.ok) throw Error("the output-check kernels do not compile for " + arch + ":\n" + compiled.log);
  module_ = std::make_unique<Module>(compiled.cubin);
}

OutputChecker& OutputChecker::shared_for(const std::string& arch) {
  // One per architecture for the process: a worker compiles the kernels once, whatever the
  // number of problems it is given.
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<OutputChecker>> checkers;
  std::lock_guard lock(mutex);
  auto& checker = checkers[arch];
  if (!checker) checker = std::make_unique<OutputChecker>(arch);
  return *checker;
}

bool OutputChecker::passes(const std::vector<Output>& outputs, CUstream stream) {
  CUTUNE_CU(cuMemsetD32Async, flags_.get(), 0u, 4, stream);
  for (const Output& o : outputs) {
    if (o.elements == 0) continue;
    CUfunction f = module_->function("check_" + o.rule->element_type);
    long long n = o.elements;
    int checked = o.rule->checked ? 1 : 0, exact = o.rule->exact ? 1 : 0;
    double rtol = o.rule->rtol, atol = o.rule->atol;
    CUdeviceptr expected = o.expected, actual = o.actual, flags = flags_.get();
    void* params[] = {&expected, &actual, &n, &checked, &exact, &rtol, &atol, &flags};
    const auto blocks = static_cast<unsigned>(std::min<long long>((n + kThreads - 1) / kThreads, 8192));
    CUTUNE_CU(cuLaunchKernel, f, blocks, 1, 1, kThreads, 1, 1, 0, stream, params, nullptr);
  }
  CUTUNE_CU(cuStreamSynchronize, stream);
  std::uint64_t flags[2] = {0, 0};
  flags_.download(flags, sizeof flags);
  const bool identical = flags[0] == 0, within_rules = flags[1] == 0;
  return identical || within_rules;
}

}  // namespace cutune
