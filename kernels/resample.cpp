#include "resample.hpp"

#include <fmt/format.h>

#include <limits>

#include "element_types.hpp"
#include "verify.hpp"

namespace cutune {
namespace {

const std::vector<ReductionOp> kOps{ReductionOp::sum, ReductionOp::mean, ReductionOp::min, ReductionOp::max};

struct Geometry {
  std::int64_t series, points, window;
  std::int64_t per_series() const { return (points + window - 1) / window; }
  std::int64_t windows() const { return series * per_series(); }
  std::int64_t total_points() const { return series * points; }
};

Geometry geometry_of(const Problem& p) { return {p.integer("series"), p.integer("points"), p.integer("window")}; }

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace

std::string ResampleFamily::summary() const {
  return "time-series windows (sum/mean/min/max of k points, Gnocchi's carbonara): thread, warp or block per "
         "window; shared-memory staging";
}

std::int64_t ResampleFamily::stage_bytes(std::int64_t block, std::int64_t wpt, std::int64_t window, std::int64_t vec,
                                         std::int64_t pad) {
  // The block's windows span at most block*wpt*window points; aligning the start down and
  // rounding the end up to whole vectors adds less than 2*vec.
  const std::int64_t elements = block * wpt * window + 2 * vec;
  const std::int64_t padded = pad ? elements + elements / 32 + 1 : elements;
  return ceil_div(padded * 4, 16) * 16;
}

Space ResampleFamily::space(const DeviceLimits& limits) const {
  Space s;
  s.labelled_axis("map", {"thread", "warp", "block"}, "what computes one window: a thread, a warp or a block")
      .axis("block", {128, 256, 512}, "threads per block")
      .axis("wpt", {1, 2, 4}, "windows per thread (map=thread)")
      .axis("stage", {0, 1}, "stage the block's points in shared memory with coalesced loads first (map=thread)")
      .axis("vec", {1, 2, 4}, "elements per vector load")
      .axis("pad", {0, 1}, "pad the staging array by one word per 32 (stage=1)")
      .require("wpt > 1 only with map=thread", [](const ConfigView& c) { return c["wpt"] == 1 || c["map"] == thread; })
      .require("stage only with map=thread", [](const ConfigView& c) { return c["stage"] == 0 || c["map"] == thread; })
      .require("pad only with stage=1", [](const ConfigView& c) { return c["pad"] == 0 || c["stage"] == 1; })
      .require("block <= device max threads per block",
               [max = limits.max_threads_per_block](const ConfigView& c) { return c["block"] <= max; })
      .require("stage=1 needs 48 KiB of shared memory per block",
               [max = limits.max_shared_per_block](const ConfigView& c) {
                 return c["stage"] == 0 || kStageCapBytes <= max;
               });
  return s;
}

Problem ResampleFamily::make_problem(std::int64_t series, std::int64_t points, std::int64_t window, ReductionOp op) {
  if (series <= 0 || points <= 0 || window <= 0)
    throw UsageError("resample: series, points and window must be positive");
  Problem p = schema().make({{"series", series}, {"points", points}, {"window", window}, {"op", to_string(op)}});
  ResampleFamily().check_problem(p);
  return p;
}

const ProblemSchema& ResampleFamily::schema() {
  static const ProblemSchema schema =
      ProblemSchema()
          .extent("series", "time series")
          .extent("points", "points per series")
          .integer("window", std::nullopt, "points per window")
          .range(1, std::nullopt)
          .enumeration("op", {"sum", "mean", "min", "max"}, "mean", "what a window computes")
          .element_type("type", {"float32"}, "float32");
  return schema;
}

void ResampleFamily::check_problem(const Problem& p) const {
  // The template indexes windows with 32 bits and points within a series with 31.
  const Geometry g = geometry_of(p);
  if (g.points > std::numeric_limits<std::int32_t>::max() || g.windows() > std::numeric_limits<std::int32_t>::max())
    throw UsageError("resample: at most 2^31 points per series and 2^31 windows");
}

ReductionOp ResampleFamily::op_of(const Problem& p) { return reduction_op(p.text("op"), kOps); }

std::vector<Problem> ResampleFamily::problems(const ProblemRequest& request) const {
  element_type(request.type.value_or("float32"), {"float32"});
  // A day of one-second points per series (86 400, which 6, 60 and 3600 divide and 7 does not:
  // its last window has 6 points); --n asks for about that many points in all. The default,
  // 384 series, is 127 MiB: well past the L2, as a bandwidth-bound kernel needs.
  constexpr std::int64_t kDay = 86'400;
  const std::vector<std::int64_t> totals =
      request.sizes.empty() ? std::vector<std::int64_t>{384 * kDay} : request.sizes;
  std::vector<Problem> list;
  for (const std::int64_t n : totals) {
    if (n <= 0) throw UsageError("--n must be positive (got " + std::to_string(n) + ")");
    const std::int64_t points = std::min(n, kDay);
    for (const std::int64_t window : {6, 60, 3600, 7})
      for (const ReductionOp op : kOps) list.push_back(make_problem(ceil_div(n, points), points, window, op));
  }
  return list;
}

std::vector<std::string> ResampleFamily::problem_definitions(const Problem& p) const {
  return {"-DCUTUNE_T=float", "-DCUTUNE_OP=" + std::to_string(template_op_code(op_of(p)))};
}

std::vector<BufferSpec> ResampleFamily::buffers(const Problem& p) const {
  const Geometry g = geometry_of(p);
  return {{"in", g.total_points() * 4, BufferRole::input}, {"out", g.windows() * 4, BufferRole::output}};
}

std::vector<Step> ResampleFamily::plan(const Problem& p, const ConfigView& c) const {
  const Geometry g = geometry_of(p);
  const std::int64_t windows = g.windows();
  unsigned shared = 0;
  std::int32_t staged = 0;
  std::int64_t blocks = windows;  // map=block
  if (c["map"] == thread) {
    blocks = ceil_div(windows, c["block"] * c["wpt"]);
    const std::int64_t bytes = stage_bytes(c["block"], c["wpt"], g.window, c["vec"], c["pad"]);
    if (c["stage"] && bytes <= kStageCapBytes) {
      staged = 1;
      shared = static_cast<unsigned>(bytes);
    }
  } else if (c["map"] == warp) {
    blocks = ceil_div(windows, c["block"] / 32);
  }
  const std::int32_t divide = op_of(p) == ReductionOp::mean ? 1 : 0;
  return {KernelLaunch{
      "resample",
      Dim3{static_cast<unsigned>(blocks)},
      Dim3{static_cast<unsigned>(c["block"])},
      shared,
      {BufferArg{"in"}, g.points, static_cast<std::int32_t>(g.window), static_cast<std::uint32_t>(g.per_series()),
       static_cast<std::uint32_t>(windows), divide, staged, BufferArg{"out"}}}};
}

void ResampleFamily::generate_inputs(const Problem& p, std::uint64_t seed, HostBuffers& inputs) const {
  fill_for(op_of(p), inputs.as<float>("in"), seed);
}

HostBuffers ResampleFamily::reference(const Problem& p, const HostBuffers& inputs) const {
  const Geometry g = geometry_of(p);
  const ReductionOp op = op_of(p);
  const auto in = inputs.as<float>("in");
  HostBuffers expected;
  expected.at("out").resize(static_cast<std::size_t>(g.windows()) * 4);
  auto out = expected.as<float>("out");
  for (std::int64_t s = 0; s < g.series; ++s)
    for (std::int64_t w = 0; w < g.per_series(); ++w) {
      const std::int64_t start = w * g.window, count = std::min(g.window, g.points - start);
      out[s * g.per_series() + w] = static_cast<float>(reduce_range(in.subspan(s * g.points + start, count), op));
    }
  return expected;
}

Verdict ResampleFamily::compare(const Problem&, const HostBuffers& expected, const HostBuffers& actual) const {
  // Window sums of the generated data are exact in any order and minima and maxima are exact;
  // what remains is the mean's division, rounded once on the device and (from a long double)
  // once here: at most an ulp apart, so two ulps of relative tolerance.
  return compare_close<float>("out", expected.as<float>("out"), actual.as<float>("out"),
                              2 * std::numeric_limits<float>::epsilon(), 0);
}

std::optional<std::vector<OutputRule>> ResampleFamily::output_rules(const Problem&, const HostBuffers&) const {
  return std::vector<OutputRule>{{"out", "float32", true, false, 2 * std::numeric_limits<float>::epsilon(), 0}};
}

Work ResampleFamily::work(const Problem& p) const {
  const Geometry g = geometry_of(p);
  const auto points = static_cast<double>(g.total_points());
  return {(points + static_cast<double>(g.windows())) * 4, points};  // read every point, write every window
}

std::unique_ptr<Family> make_resample_family() { return std::make_unique<ResampleFamily>(); }

}  // namespace cutune
