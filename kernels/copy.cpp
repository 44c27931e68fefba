#include "copy.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "data.hpp"
#include "element_types.hpp"
#include "verify.hpp"

namespace cutune {
namespace {

struct Geometry {
  std::int64_t n, offset, stride;
  std::int64_t input_elements() const { return offset + (n - 1) * stride + 1; }
};

Geometry geometry_of(const Problem& p) { return {p.integer("n"), p.integer("offset"), p.integer("stride")}; }

}  // namespace

std::string CopyFamily::summary() const {
  return "coalescing probe: float32 copy with a read offset or stride; its best aligned config is the copy ceiling";
}

Space CopyFamily::space(const DeviceLimits& limits) const {
  Space s;
  s.axis("block", {128, 256, 512, 1024}, "threads per block")
      .axis("ept", {1, 2, 4, 8, 16, 32}, "elements per thread: a block copies block*ept elements")
      .axis("vec", {1, 2, 4}, "elements per vector access (aligned dense copies only)")
      .require("ept % vec == 0", [](const ConfigView& c) { return c["ept"] % c["vec"] == 0; })
      .require("block <= device max threads per block",
               [max = limits.max_threads_per_block](const ConfigView& c) { return c["block"] <= max; });
  return s;
}

const ProblemSchema& CopyFamily::schema() {
  static const ProblemSchema schema = ProblemSchema()
                                          .extent("n", "elements copied")
                                          .element_type("type", {"float32"}, "float32")
                                          .integer("offset", 0, "first element read")
                                          .range(0, std::nullopt)
                                          .unkeyed_at_default()
                                          .integer("stride", 1, "elements between reads")
                                          .range(1, std::nullopt)
                                          .unkeyed_at_default();
  return schema;
}

Problem CopyFamily::make_problem(std::int64_t n, std::int64_t offset, std::int64_t stride) {
  if (n <= 0) throw UsageError("--n must be positive (got " + std::to_string(n) + ")");
  if (offset < 0 || stride < 1) throw UsageError("copy: offset must be >= 0 and stride >= 1");
  return schema().make({{"n", n}, {"offset", offset}, {"stride", stride}});
}

std::vector<Problem> CopyFamily::problems(const ProblemRequest& request) const {
  element_type(request.type.value_or("float32"), {"float32"});
  // 512 MiB each way, the size the session measures cuMemcpy's bandwidth at; at every size the
  // aligned copy, the guide's misaligned copy (offset 1) and strided copy (stride 2).
  const std::vector<std::int64_t> defaults{std::int64_t{1} << 27};
  std::vector<Problem> list;
  for (std::int64_t n : request.sizes.empty() ? defaults : request.sizes) {
    list.push_back(make_problem(n));
    list.push_back(make_problem(n, 1, 1));
    list.push_back(make_problem(n, 0, 2));
  }
  return list;
}

std::vector<std::string> CopyFamily::problem_definitions(const Problem&) const { return {"-DCUTUNE_T=float"}; }

std::vector<BufferSpec> CopyFamily::buffers(const Problem& p) const {
  const Geometry g = geometry_of(p);
  return {{"in", g.input_elements() * 4, BufferRole::input}, {"out", g.n * 4, BufferRole::output}};
}

std::vector<Step> CopyFamily::plan(const Problem& p, const ConfigView& c) const {
  const Geometry g = geometry_of(p);
  const std::int64_t tile = c["block"] * c["ept"];
  return {KernelLaunch{"copy_kernel",
                       Dim3{static_cast<unsigned>((g.n + tile - 1) / tile)},
                       Dim3{static_cast<unsigned>(c["block"])},
                       0,
                       {BufferArg{"in"}, g.offset, g.stride, g.n, BufferArg{"out"}}}};
}

void CopyFamily::generate_inputs(const Problem&, std::uint64_t seed, HostBuffers& inputs) const {
  fill_uniform_nonzero(inputs.as<float>("in"), seed);
}

HostBuffers CopyFamily::reference(const Problem& p, const HostBuffers& inputs) const {
  const Geometry g = geometry_of(p);
  const auto in = inputs.as<float>("in");
  HostBuffers expected;
  expected.at("out").resize(static_cast<std::size_t>(g.n) * 4);
  auto out = expected.as<float>("out");
  for (std::int64_t i = 0; i < g.n; ++i) out[i] = in[g.offset + i * g.stride];
  return expected;
}

Verdict CopyFamily::compare(const Problem&, const HostBuffers& expected, const HostBuffers& actual) const {
  return compare_exact<float>("out", expected.as<float>("out"), actual.as<float>("out"));
}

std::optional<std::vector<OutputRule>> CopyFamily::output_rules(const Problem&, const HostBuffers&) const {
  return std::vector<OutputRule>{{"out", "float32"}};  // exact, as compare()
}

Work CopyFamily::work(const Problem& p) const {
  return {2.0 * static_cast<double>(geometry_of(p).n) * 4, 0};  // each moved element read once and written once
}

std::unique_ptr<Family> make_copy_family() { return std::make_unique<CopyFamily>(); }

}  // namespace cutune
