#include "avgmatvec.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "data.hpp"
#include "verify.hpp"

namespace cutune {
namespace {

struct Dims {
  std::int64_t n, m, l;
};
Dims dims_of(const Problem& p) { return {p.integer("n"), p.integer("m"), p.integer("l")}; }

}  // namespace

std::string AvgmatvecFamily::summary() const {
  return "NVIDIA's ADO example: average N sets of M vectors (v[n][l][m]), times an L x L matrix; split (tiled "
         "product) or fused";
}

Space AvgmatvecFamily::space(const DeviceLimits& limits) const {
  Space s;
  // Labels are appended, never reordered: a stored config's fuse value keeps its meaning. (Configs
  // are stored by label; the stream and pipe labels that followed fused were removed, and so was
  // splitpf after split64k4: their stored configs no longer parse.)
  s.labelled_axis("fuse",
                  {"split", "fused", "split64x32", "split64k2", "split64k4", "splitcp", "split64k2cp", "split64k4cp",
                   "splittc", "split64k2tc", "split64k4tc"},
                  "averages to memory then a tiled product (64 x 64 tiles; 64 x 32; 64 x 64 with the depth split in "
                  "2 or 4 blocks, the last to finish adding them; split64x32 and split64k2/k4 prefetch their slabs "
                  "of A and the averages into L2; the cp forms feed split's, split64k2's and split64k4's tiles by "
                  "a cp.async pipeline, and the tc forms those with the products on the tensor cores, three TF32 "
                  "products each); fused: one block per set")
      .labelled_axis("reduce", {"warp", "shared"}, "a row of M values: warp shuffles, or a block-wide shared tree")
      .axis("block", {128, 256, 512, 1024}, "threads per block of the averages (avg_rows, or the fused kernel)")
      .axis("ept", {1, 2, 4, 8}, "vector loads in flight per thread")
      .axis("vec", {1, 2, 4}, "floats per vector load")
      .labelled_axis("pdl", {"off", "end"},
                     "the cp forms' product by programmatic dependent launch (sm_90): it may launch once every "
                     "averaging block has read its rows, fetches its first steps of A, then waits for the averages")
      .require("the cp forms need cp.async (sm_80 or newer)",
               [major = limits.cc_major](const ConfigView& c) { return !matvec_async(c["fuse"]) || major >= 8; })
      .require("programmatic dependent launch is for the cp forms, on sm_90 or newer",
               [major = limits.cc_major](const ConfigView& c) {
                 return c["pdl"] == pdl_off || (matvec_async(c["fuse"]) && major >= 9);
               })
      .require("the cp forms' pipeline buffers <= device opt-in shared memory per block",
               [max = limits.max_shared_per_block_optin](const ConfigView& c) {
                 return !matvec_async(c["fuse"]) || matvec_shape(c["fuse"]).dynamic_shared_bytes() <= max;
               })
      .require("block <= device max threads per block",
               [max = limits.max_threads_per_block](const ConfigView& c) { return c["block"] <= max; })
      .require("shared memory (tree + the fused kernel's average of the longest vectors) <= device opt-in limit",
               [max = limits.max_shared_per_block_optin](const ConfigView& c) {
                 const std::int64_t tree = c["reduce"] == shared ? c["block"] * 4 : 0;
                 const std::int64_t average = c["fuse"] == fused ? kMaxLength * 4 : 0;
                 return tree + average <= max;
               });
  return s;
}

const ProblemSchema& AvgmatvecFamily::schema() {
  // The size is n * m * l, the elements of v: what a run reads.
  static const ProblemSchema schema = ProblemSchema()
                                          .extent("n", "sets")
                                          .extent("m", "vectors per set")
                                          .extent("l", "vector length (and the matrix's order)")
                                          .range(1, kMaxLength)
                                          .element_type("type", {"float32"}, "float32");
  return schema;
}

void AvgmatvecFamily::check_problem(const Problem& p) const {
  if (p.integer("n") * p.integer("l") > (std::int64_t{1} << 31) - 1) throw UsageError("avgmatvec needs n * l < 2^31");
}

Problem AvgmatvecFamily::make_problem(std::int64_t n, std::int64_t m, std::int64_t l) {
  for (std::int64_t d : {n, m, l})
    if (d <= 0) throw UsageError("--n must be positive (got " + std::to_string(d) + ")");
  if (l > kMaxLength) throw UsageError(fmt::format("avgmatvec vectors are at most {} long (got {})", kMaxLength, l));
  Problem p = schema().make({{"n", n}, {"m", m}, {"l", l}});
  AvgmatvecFamily().check_problem(p);
  return p;
}

std::vector<Problem> AvgmatvecFamily::problems(const ProblemRequest& request) const {
  if (request.type && *request.type != "float32")
    throw UsageError("unknown --type '" + *request.type + "' (this kernel takes: float32)");
  // The study's sizes: N = M = L = 512 (512 MiB of vectors) and 1024 (4 GiB). --n N gives N = M = L.
  const std::vector<std::int64_t> defaults{512, 1024};
  std::vector<Problem> list;
  for (std::int64_t size : request.sizes.empty() ? defaults : request.sizes)
    list.push_back(make_problem(size, size, size));
  return list;
}

std::vector<std::string> AvgmatvecFamily::problem_definitions(const Problem&) const { return {}; }

std::vector<BufferSpec> AvgmatvecFamily::buffers(const Problem& p) const {
  const auto [n, m, l] = dims_of(p);
  return {{"v", n * m * l * 4, BufferRole::input},
          {"a", l * l * 4, BufferRole::input},
          {"y", l * n * 4, BufferRole::output}};
}

AvgmatvecFamily::MatvecShape AvgmatvecFamily::matvec_shape(std::int64_t fuse) {
  switch (fuse) {
    case split:
      return {64, 64, 1};
    case split_64x32:
      return {64, 32, 1};
    case split_64k2:
      return {64, 64, 2};
    case split_64k4:
      return {64, 64, 4};
    case split_cp:
      return {64, 64, 1, true};
    case split_64k2_cp:
      return {64, 64, 2, true};
    case split_64k4_cp:
      return {64, 64, 4, true};
    case split_tc:
      return {64, 64, 1, true, true};
    case split_64k2_tc:
      return {64, 64, 2, true, true};
    case split_64k4_tc:
      return {64, 64, 4, true, true};
    default:
      throw Error(fmt::format("avgmatvec: fuse value {} is not a split variant", fuse));
  }
}

bool AvgmatvecFamily::matvec_async(std::int64_t fuse) { return fuse != fused && matvec_shape(fuse).async; }

namespace {
// The product's grid: tiles of sets (x), of rows of y (y), parts of the depth (z).
Dim3 matvec_grid(std::int64_t n, std::int64_t l, AvgmatvecFamily::MatvecShape shape) {
  return {static_cast<unsigned>((n + shape.sets - 1) / shape.sets),
          static_cast<unsigned>((l + shape.rows - 1) / shape.rows), static_cast<unsigned>(shape.parts)};
}
}  // namespace

std::vector<BufferSpec> AvgmatvecFamily::scratch(const Problem& p, const ConfigView& c) const {
  if (c["fuse"] == fused) return {};
  const auto [n, m, l] = dims_of(p);
  std::vector<BufferSpec> list{{"avg", n * l * 4, BufferRole::scratch}};
  const MatvecShape shape = matvec_shape(c["fuse"]);
  if (shape.parts > 1) {  // each part's 4 x 4 results a thread, a counter a tile (see the template)
    const Dim3 grid = matvec_grid(n, l, shape);
    const std::int64_t tiles = std::int64_t{grid.x} * grid.y;
    list.push_back({"part", tiles * shape.parts * shape.threads() * 16 * 4, BufferRole::scratch});
    list.push_back({"finished", tiles * 4, BufferRole::scratch});
  }
  return list;
}

std::vector<Step> AvgmatvecFamily::plan(const Problem& p, const ConfigView& c) const {
  const auto [n, m, l] = dims_of(p);
  const auto n32 = static_cast<std::int32_t>(n), m32 = static_cast<std::int32_t>(m), l32 = static_cast<std::int32_t>(l);
  const Dim3 block{static_cast<unsigned>(c["block"])};
  if (c["fuse"] == fused)
    return {KernelLaunch{"avgmatvec_fused",
                         Dim3{static_cast<unsigned>(n)},
                         block,
                         static_cast<unsigned>(l * 4),
                         {BufferArg{"v"}, BufferArg{"a"}, n32, m32, l32, BufferArg{"y"}}}};
  const std::int64_t rows = n * l;
  const std::int64_t row_blocks = c["reduce"] == warp ? (rows + c["block"] / 32 - 1) / (c["block"] / 32) : rows;
  const MatvecShape shape = matvec_shape(c["fuse"]);
  std::vector<KernelArg> product_args{BufferArg{"a"}, BufferArg{"avg"}, n32, l32};
  if (shape.parts > 1) {  // no memset: the counters reset themselves (see the template)
    product_args.push_back(BufferArg{"part"});
    product_args.push_back(BufferArg{"finished"});
  }
  product_args.push_back(BufferArg{"y"});
  return {KernelLaunch{"avg_rows",
                       Dim3{static_cast<unsigned>(row_blocks)},
                       block,
                       0,
                       {BufferArg{"v"}, n32, m32, l32, BufferArg{"avg"}}},
          KernelLaunch{"matvec_tiles", matvec_grid(n, l, shape), Dim3{static_cast<unsigned>(shape.threads())},
                       static_cast<unsigned>(shape.dynamic_shared_bytes()), std::move(product_args),
                       /*fill_device=*/false,
                       /*programmatic=*/c["pdl"] != pdl_off}};
}

void AvgmatvecFamily::generate_inputs(const Problem& p, std::uint64_t seed, HostBuffers& inputs) const {
  // All positive, so the error bounds below are relative to y itself. Each (set, component)
  // row has its own scale (a factor of 16 between rows) so that averaging the wrong row or
  // set changes y by percents, not by noise; within a row values vary by a factor of 3.
  const auto [n, m, l] = dims_of(p);
  auto v = inputs.as<float>("v");
  RandomStream scales(seed ^ 0x5ca1e), values(seed);
  for (std::int64_t row = 0; row < n * l; ++row) {
    const double scale = scales.uniform(0.25, 4.0);
    fill_uniform(v.subspan(static_cast<std::size_t>(row * m), static_cast<std::size_t>(m)), 0.5 * scale, 1.5 * scale,
                 values);
  }
  fill_uniform(inputs.as<float>("a"), 0.25, 1.25, seed ^ 0xa);
}

void average_then_multiply(std::span<const float> v, std::span<const float> a, std::int64_t n, std::int64_t m,
                           std::int64_t l, std::span<double> y) {
  std::vector<double> avg(static_cast<std::size_t>(l));
  for (std::int64_t set = 0; set < n; ++set) {
    for (std::int64_t r = 0; r < l; ++r) {
      const float* row = v.data() + (set * l + r) * m;
      double sum = 0;
      for (std::int64_t i = 0; i < m; ++i) sum += row[i];
      avg[r] = sum / static_cast<double>(m);
    }
    for (std::int64_t r = 0; r < l; ++r) {
      const float* a_row = a.data() + r * l;
      double dot = 0;
      for (std::int64_t q = 0; q < l; ++q) dot += static_cast<double>(a_row[q]) * avg[q];
      y[r * n + set] = dot;
    }
  }
}

HostBuffers AvgmatvecFamily::reference(const Problem& p, const HostBuffers& inputs) const {
  const auto [n, m, l] = dims_of(p);
  std::vector<double> y(static_cast<std::size_t>(l * n));
  average_then_multiply(inputs.as<float>("v"), inputs.as<float>("a"), n, m, l, y);
  HostBuffers expected;
  expected.at("y").resize(y.size() * 4);
  auto out = expected.as<float>("y");
  for (std::size_t i = 0; i < y.size(); ++i) out[i] = static_cast<float>(y[i]);
  return expected;
}

// On the GPU each y is a sum of L positive products of averages, each a sum of M positive
// values times the rounded 1/M, all in fp32 in any order. Each value of v reaches y through at
// most M - 1 additions and one multiplication in its average (plus the rounding of 1/M), then a
// multiplication and L - 1 additions in the dot product: M + L + 1 roundings, all on positive
// terms, so gamma_{M+L+1} relative to y (Higham 3.1); one more for margin. The expected value
// is the exact one rounded to float: + u, and u for the double reference's own error.
double AvgmatvecFamily::relative_tolerance(std::int64_t m, std::int64_t l) {
  return gamma_bound(static_cast<double>(m + l + 2), kFloatUnitRoundoff) + 2 * kFloatUnitRoundoff;
}

Verdict AvgmatvecFamily::compare(const Problem& p, const HostBuffers& expected, const HostBuffers& actual) const {
  const auto [n, m, l] = dims_of(p);
  return compare_close<float>("y", expected.as<float>("y"), actual.as<float>("y"), relative_tolerance(m, l), 0);
}

std::optional<std::vector<OutputRule>> AvgmatvecFamily::output_rules(const Problem& p, const HostBuffers&) const {
  const auto [n, m, l] = dims_of(p);
  return std::vector<OutputRule>{{"y", "float32", true, false, relative_tolerance(m, l), 0}};
}

Work AvgmatvecFamily::work(const Problem& p) const {
  const auto [n, m, l] = dims_of(p);
  const double nd = static_cast<double>(n), md = static_cast<double>(m), ld = static_cast<double>(l);
  // The byte floor: v and A read once, y written once. Flops: the additions of the averages,
  // their scaling, and the products.
  return {(nd * md * ld + ld * ld + ld * nd) * 4, nd * md * ld + nd * ld + 2 * nd * ld * ld};
}

std::unique_ptr<Family> make_avgmatvec_family() { return std::make_unique<AvgmatvecFamily>(); }

}  // namespace cutune
