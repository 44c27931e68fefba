#include "output_check.hpp"

#include <map>
#include <mutex>

#include "compile.hpp"

namespace cutune {
namespace {

// One kernel per element type. Each thread walks its elements grid-stride; a warp raises a flag
// with one atomic when any lane saw a differing byte pattern or a broken rule. The rule is the one
// of compare_exact / compare_close (kernels/verify.hpp), in double.
// One kernel per element type. Each thread walks its elements grid-stride; per output, a warp
// raises "some byte differs" with one atomic when any lane saw a differing byte pattern, and
// lowers "first broken element" to the lowest index at which a lane saw the rule broken. The rule
// is the one of compare_exact / compare_close (kernels/verify.hpp), in double.
constexpr const char* kSource = R"cu(
typedef unsigned int cutune_u32;
typedef unsigned long long cutune_u64;

template <class T, class Bits>
__device__ void cutune_check(const T* expected, const T* actual, long long n, int checked, int exact, double rtol,
                             double atol, cutune_u64* differs_flag, cutune_u64* first_break) {
  bool differs = false;
  cutune_u64 first = ~0ull;  // a thread's indexes rise, so its first break is its lowest
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    const T e = expected[i], a = actual[i];
    differs |= *reinterpret_cast<const Bits*>(&e) != *reinterpret_cast<const Bits*>(&a);
    if (!checked || first != ~0ull) continue;
    bool breaks;
    if (exact) {
      breaks = !(a == e);
    } else {
      const double de = (double)e, da = (double)a;
      breaks = !(fabs(da - de) <= rtol * fabs(de) + atol);
    }
    if (breaks) first = (cutune_u64)i;
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    const cutune_u64 other = __shfl_down_sync(0xffffffffu, first, offset);
    first = other < first ? other : first;
  }
  const bool any_differs = __any_sync(0xffffffffu, differs);
  if ((threadIdx.x & 31) == 0) {
    if (any_differs) atomicOr(differs_flag, 1ull);
    if (first != ~0ull) atomicMin(first_break, first);
  }
}

#define CUTUNE_CHECK_KERNEL(NAME, T, BITS)                                                                    \
  extern "C" __global__ void NAME(const T* e, const T* a, long long n, int checked, int exact, double rtol, \
                                  double atol, cutune_u64* differs, cutune_u64* first_break) {              \
    cutune_check<T, BITS>(e, a, n, checked, exact, rtol, atol, differs, first_break);                        \
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

OutputChecker::OutputChecker(const std::string& arch) {
  // Through the compile cache: every worker process (one per tuning run) needs them.
  const Compiled compiled = CompileCache(CompileCache::default_folder())
                                .compile_one({"cutune_output_check.cu", output_check_source(), {}, arch});
  if (!compiled.ok) throw Error("the output-check kernels do not compile for " + arch + ":\n" + compiled.log);
  module_ = std::make_unique<Module>(compiled.cubin);
}

namespace {

// One checker per architecture for the process: a worker compiles the kernels once, whatever the
// number of problems it is given.
struct SharedCheckers {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<OutputChecker>> by_arch;
};

SharedCheckers& shared_checkers() {
  static SharedCheckers checkers;
  return checkers;
}

}  // namespace

OutputChecker& OutputChecker::shared_for(const std::string& arch) {
  SharedCheckers& shared = shared_checkers();
  std::lock_guard lock(shared.mutex);
  auto& checker = shared.by_arch[arch];
  if (!checker) checker = std::make_unique<OutputChecker>(arch);
  return *checker;
}

void OutputChecker::release_all() {
  SharedCheckers& shared = shared_checkers();
  std::lock_guard lock(shared.mutex);
  shared.by_arch.clear();
}

OutputCheck OutputChecker::check(const std::vector<Output>& outputs, CUstream stream) {
  // Per output: a "differs" word, then (after all of them) a "first broken element" word.
  const std::size_t k = outputs.size();
  if (slots_.bytes() < 2 * k * sizeof(std::uint64_t))
    slots_ = DeviceBuffer(2 * std::max<std::size_t>(k, 4) * sizeof(std::uint64_t));
  if (k == 0) return {};
  CUTUNE_CU(cuMemsetD32Async, slots_.get(), 0u, 2 * k, stream);
  CUTUNE_CU(cuMemsetD32Async, slots_.get() + k * sizeof(std::uint64_t), 0xffffffffu, 2 * k, stream);
  for (std::size_t r = 0; r < k; ++r) {
    const Output& o = outputs[r];
    if (o.elements == 0) continue;
    CUfunction f = module_->function("check_" + o.rule->element_type);
    long long n = o.elements;
    int checked = o.rule->checked ? 1 : 0, exact = o.rule->exact ? 1 : 0;
    double rtol = o.rule->rtol, atol = o.rule->atol;
    CUdeviceptr expected = o.expected, actual = o.actual;
    CUdeviceptr differs = slots_.get() + r * sizeof(std::uint64_t),
                first_break = slots_.get() + (k + r) * sizeof(std::uint64_t);
    void* params[] = {&expected, &actual, &n, &checked, &exact, &rtol, &atol, &differs, &first_break};
    const auto blocks = static_cast<unsigned>(std::min<long long>((n + kThreads - 1) / kThreads, 8192));
    CUTUNE_CU(cuLaunchKernel, f, blocks, 1, 1, kThreads, 1, 1, 0, stream, params, nullptr);
  }
  CUTUNE_CU(cuStreamSynchronize, stream);
  std::vector<std::uint64_t> words(2 * k);
  slots_.download(words.data(), words.size() * sizeof(std::uint64_t));
  bool identical = true;
  std::optional<RuleBreak> first_break;
  for (std::size_t r = 0; r < k; ++r) {
    identical = identical && words[r] == 0;
    const std::uint64_t index = words[k + r];
    if (first_break || index == ~std::uint64_t{0}) continue;
    // Only the two elements come back, for the message.
    RuleBreak b{r, static_cast<std::int64_t>(index)};
    const std::size_t element = outputs[r].rule->element_type.ends_with("64") ? 8 : 4;
    CUTUNE_CU(cuMemcpyDtoH, b.expected.data(), outputs[r].expected + index * element, element);
    CUTUNE_CU(cuMemcpyDtoH, b.actual.data(), outputs[r].actual + index * element, element);
    first_break = b;
  }
  if (identical || !first_break) return {};
  return {false, first_break};
}

}  // namespace cutune
