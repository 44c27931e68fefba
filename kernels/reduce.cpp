#include "reduce.hpp"

#include <fmt/format.h>

#include <bit>
#include <limits>

#include "element_types.hpp"
#include "verify.hpp"

namespace cutune {
namespace {

const std::vector<std::string> kTypes{"float32", "float64"};

std::int64_t n_of(const Problem& p) { return p.integer("n"); }
std::int64_t element_bytes(const Problem& p) {
  return static_cast<std::int64_t>(element_type(p.dtype(), kTypes).bytes);
}
std::int64_t tiles_of(const Problem& p, const ConfigView& c) {
  return (n_of(p) + c["block"] * c["ept"] - 1) / (c["block"] * c["ept"]);
}

// The value *out starts from in the atomic pass, as one repeated 32-bit word.
std::uint32_t identity_word(ReductionOp op) {
  if (op == ReductionOp::min) return std::bit_cast<std::uint32_t>(std::numeric_limits<float>::infinity());
  if (op == ReductionOp::max) return std::bit_cast<std::uint32_t>(-std::numeric_limits<float>::infinity());
  return 0;  // 0.0f and 0.0 alike
}

template <class F>
void dispatch_type(const std::string& dtype, F&& f) {
  if (dtype == "float32")
    f(float{});
  else if (dtype == "float64")
    f(double{});
  else
    throw Error("reduce: unsupported element type " + dtype);
}

}  // namespace

std::string ReduceFamily::summary() const {
  return "sum/min/max of float32 (sum of float64): tree or shuffle fold with a fold stop, one pass (atomics into an "
         "output preset by memset or stream writes, last block) or two";
}

std::int64_t ReduceFamily::shared_bytes(std::int64_t finish, std::int64_t block, std::int64_t pad,
                                        std::int64_t element_bytes) {
  const std::int64_t words = finish == smem ? (pad ? block + (block - 1) / 32 : block) : block / 32;
  return words * element_bytes + 8;  // + the last block's flag
}

Space ReduceFamily::space(const DeviceLimits& limits) const {
  Space s;
  s.axis("block", {128, 256, 512, 1024}, "threads per block")
      .axis("ept", {4, 16, 64}, "elements per thread: a block reduces block*ept values")
      .axis("vec", {1, 2, 4}, "elements per vector load")
      .labelled_axis("finish", {"smem", "shuffle"},
                     "block fold: shared-memory tree with a warp-synchronous last warp, or warp shuffles")
      .axis("fold", {1, 8}, "fold stop k: the parallel fold stops at 2k partials, which thread 0 adds serially")
      .axis("pad", {0, 1}, "pad the shared tree by one word per 32 (finish=smem)")
      .labelled_axis("pass", {"atomic", "lastblock", "twopass"},
                     "one pass with an atomic per block, one pass whose last block folds the partials, or two launches")
      .labelled_axis("preset", {"memset", "stream"},
                     "pass=atomic: the output starts from the operator's identity, set by a memset or by stream "
                     "memory writes (cuStreamWriteValue32), which launch nothing")
      .plan_only()
      .require("ept % vec == 0", [](const ConfigView& c) { return c["ept"] % c["vec"] == 0; })
      .require("only pass=atomic presets its output (preset = memset otherwise)",
               [](const ConfigView& c) { return c["pass"] == atomic || c["preset"] == memset; })
      .require("shuffle folds the block/32 warp totals: 2*fold <= block/32",
               [](const ConfigView& c) { return c["finish"] == smem || 2 * c["fold"] <= c["block"] / 32; })
      .require("pad only where there is a shared tree (finish=smem)",
               [](const ConfigView& c) { return c["pad"] == 0 || c["finish"] == smem; })
      // The fold runs once per block after all loads; it does not interact with their width, so
      // its variants are crossed with 16-byte loads only and narrower loads use the shuffle fold.
      .require("fold variants (finish=smem, fold>1, pad) with vec=4 only",
               [](const ConfigView& c) { return c["vec"] == 4 || (c["finish"] == shuffle && c["fold"] == 1); })
      .require("block <= device max threads per block",
               [max = limits.max_threads_per_block](const ConfigView& c) { return c["block"] <= max; })
      .require("shared memory (8-byte elements) <= device limit per block",
               [max = limits.max_shared_per_block](const ConfigView& c) {
                 return shared_bytes(c["finish"], c["block"], c["pad"], 8) <= max;
               });
  return s;
}

const ProblemSchema& ReduceFamily::schema() {
  static const ProblemSchema schema = ProblemSchema()
                                          .extent("n", "elements to reduce")
                                          .enumeration("op", {"sum", "min", "max"}, "sum", "the operator")
                                          .element_type("type", kTypes, "float32");
  return schema;
}

namespace {
void check_reduce_problem(const Problem& p) {
  if (p.dtype() == "float64" && p.text("op") != "sum")
    throw UsageError("reduce problem '" + p.key() + "': float64 takes only sum");
}
}  // namespace

void ReduceFamily::check_problem(const Problem& p) const { check_reduce_problem(p); }

Problem ReduceFamily::make_problem(std::int64_t n, ReductionOp op, const std::string& type) {
  if (n <= 0) throw UsageError("--n must be positive (got " + std::to_string(n) + ")");
  element_type(type, kTypes);
  if (op == ReductionOp::mean) throw UsageError("reduce: no mean (take the sum)");
  Problem p = schema().make({{"n", n}, {"op", to_string(op)}, {"type", type}});
  check_reduce_problem(p);
  return p;
}

ReductionOp ReduceFamily::op_of(const Problem& p) {
  return reduction_op(p.text("op"), {ReductionOp::sum, ReductionOp::min, ReductionOp::max});
}

std::vector<Problem> ReduceFamily::problems(const ProblemRequest& request) const {
  const std::string type = request.type.value_or("float32");
  element_type(type, kTypes);
  // From launch-bound (4 KiB) to bandwidth-bound (512 MiB of float32); the operator is part of
  // the problem, every operator the type takes at every size.
  const std::vector<std::int64_t> defaults{1 << 10, 1 << 15, 1 << 20, 1 << 24, 1 << 27};
  const std::vector<ReductionOp> ops = type == "float32"
                                           ? std::vector{ReductionOp::sum, ReductionOp::min, ReductionOp::max}
                                           : std::vector{ReductionOp::sum};
  std::vector<Problem> list;
  for (std::int64_t n : request.sizes.empty() ? defaults : request.sizes)
    for (const ReductionOp op : ops) list.push_back(make_problem(n, op, type));
  return list;
}

std::vector<std::string> ReduceFamily::problem_definitions(const Problem& p) const {
  return {"-DCUTUNE_T=" + element_type(p.dtype(), kTypes).cuda_name,
          "-DCUTUNE_OP=" + std::to_string(template_op_code(op_of(p)))};
}

std::vector<BufferSpec> ReduceFamily::buffers(const Problem& p) const {
  return {{"in", n_of(p) * element_bytes(p), BufferRole::input}, {"out", element_bytes(p), BufferRole::output}};
}

std::vector<BufferSpec> ReduceFamily::scratch(const Problem& p, const ConfigView& c) const {
  if (c["pass"] == atomic) return {};
  std::vector<BufferSpec> specs{{"partials", tiles_of(p, c) * element_bytes(p), BufferRole::scratch}};
  if (c["pass"] == lastblock) specs.push_back({"finished", 4, BufferRole::scratch});
  return specs;
}

std::vector<Step> ReduceFamily::plan(const Problem& p, const ConfigView& c) const {
  const std::int64_t n = n_of(p), tiles = tiles_of(p, c);
  const Dim3 grid{static_cast<unsigned>(tiles)}, block{static_cast<unsigned>(c["block"])};
  switch (c["pass"]) {
    case atomic:
      return {MemsetStep{"out", identity_word(op_of(p)), element_bytes(p), 0, c["preset"] == stream},
              KernelLaunch{"reduce_atomic", grid, block, 0, {BufferArg{"in"}, n, BufferArg{"out"}}}};
    case lastblock:  // no memset: the counter resets itself (see the template)
      return {KernelLaunch{"reduce_lastblock",
                           grid,
                           block,
                           0,
                           {BufferArg{"in"}, n, BufferArg{"partials"}, BufferArg{"finished"}, BufferArg{"out"}}}};
    default:
      return {KernelLaunch{"reduce_partials", grid, block, 0, {BufferArg{"in"}, n, BufferArg{"partials"}}},
              KernelLaunch{"reduce_final", Dim3{1}, block, 0, {BufferArg{"partials"}, tiles, BufferArg{"out"}}}};
  }
}

void ReduceFamily::generate_inputs(const Problem& p, std::uint64_t seed, HostBuffers& inputs) const {
  dispatch_type(p.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const auto in = inputs.as<T>("in");
    const ReductionOp op = op_of(p);
    fill_for(op, in, seed);
    // One element beyond the others' range, at a random place: the extreme is unique, so a
    // kernel that skips any part of the input misses it with that part's share of probability.
    if (op != ReductionOp::sum) in[(seed * 0x9e3779b97f4a7c15ull >> 11) % in.size()] = op == ReductionOp::min ? -9 : 9;
  });
}

HostBuffers ReduceFamily::reference(const Problem& p, const HostBuffers& inputs) const {
  HostBuffers expected;
  dispatch_type(p.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const auto in = inputs.as<T>("in");
    expected.at("out").resize(sizeof(T));
    expected.as<T>("out")[0] = static_cast<T>(reduce_range(in, op_of(p)));
    // Not a device buffer: the error a correct kernel may make on these inputs (sums only).
    expected.at("tolerance").resize(sizeof(double));
    expected.as<double>("tolerance")[0] = op_of(p) == ReductionOp::sum ? sum_tolerance(in) : 0.0;
  });
  return expected;
}

Verdict ReduceFamily::compare(const Problem& p, const HostBuffers& expected, const HostBuffers& actual) const {
  Verdict verdict;
  dispatch_type(p.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if (op_of(p) == ReductionOp::sum)
      verdict =
          compare_close<T>("out", expected.as<T>("out"), actual.as<T>("out"), 0, expected.as<double>("tolerance")[0]);
    else
      verdict = compare_exact<T>("out", expected.as<T>("out"), actual.as<T>("out"));  // min and max are exact
  });
  return verdict;
}

std::optional<std::vector<OutputRule>> ReduceFamily::output_rules(const Problem& p, const HostBuffers& expected) const {
  if (op_of(p) != ReductionOp::sum) return std::vector<OutputRule>{{"out", p.dtype()}};  // min and max are exact
  return std::vector<OutputRule>{{"out", p.dtype(), true, false, 0, expected.as<double>("tolerance")[0]}};
}

Work ReduceFamily::work(const Problem& p) const {
  const auto n = static_cast<double>(n_of(p));
  return {(n + 1) * static_cast<double>(element_bytes(p)), n};  // read every value once; one operation each
}

std::unique_ptr<Family> make_reduce_family() { return std::make_unique<ReduceFamily>(); }

}  // namespace cutune
