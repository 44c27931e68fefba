#include "matmul.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "core/error.hpp"
#include "data.hpp"
#include "verify.hpp"

namespace cutune {
namespace {

// Inputs are uniform in [kLow, kHigh): positive, so every product is positive and the error
// bound of a dot product, gamma_k * sum |a||b|, is gamma_k times the result itself. The spread
// (a factor of 7) keeps rows and columns distinguishable: reading a wrong row of A changes a
// result by about 1 % at k = 4096, forty times the tolerance.
constexpr double kLow = 0.25, kHigh = 1.75;

// The reference is exact for every element up to this many multiply-adds (about a second in
// double on one core); beyond, it computes rows and columns within this budget each.
constexpr std::int64_t kFullReferenceMacs = std::int64_t{1} << 30;
constexpr std::int64_t kSampleMacs = std::int64_t{1} << 29;

struct Dims {
  std::int64_t m, n, k;
};
Dims dims_of(const Problem& p) { return {p.integer("m"), p.integer("n"), p.integer("k")}; }

// The block tiles a config cuts C into (partial tiles at the edges included).
struct TileGrid {
  std::int64_t rows, columns, tile_rows, tile_columns;  // tiles down and across; a tile's extent
  std::int64_t count() const { return rows * columns; }
};
TileGrid tile_grid(const Problem& p, const ConfigView& c) {
  const std::int64_t m = p.integer("m"), n = p.integer("n");
  const std::int64_t rows = MatmulFamily::tile_rows(c["tile"], c["shape"]);
  const std::int64_t columns = MatmulFamily::tile_columns(c["tile"], c["shape"]);
  return {(m + rows - 1) / rows, (n + columns - 1) / columns, rows, columns};
}

// Relative error allowed against the exact result: fp32 accumulation of k positive products in
// any order (gamma_k, which covers products rounded separately or fused), plus the rounding of
// the double reference to float (u) and the reference's own double rounding (negligible, < u).
double relative_tolerance(std::int64_t k) {
  return gamma_bound(static_cast<double>(k), kFloatUnitRoundoff) + 2 * kFloatUnitRoundoff;
}

// The largest mean relative error (signed, over the elements the reference computed) a config may
// have. Additions rounded to nearest err either way: the mean of k of them is a random walk of
// about 0.3 sqrt(k) u per element, and less over many elements. Additions that truncate (the
// tensor cores' fp32 sums) all err downwards: adding every product of k = 4096 into the running
// sums there drifted by 4.6e-5, inside gamma_k (2.4e-4) but six times this bound (7.6e-6).
double drift_bound(std::int64_t k) { return 2 * std::sqrt(static_cast<double>(k)) * kFloatUnitRoundoff; }

}  // namespace

std::string MatmulFamily::summary() const {
  return "fp32 C = A B: the best-practices guide's shared-memory tiles (A, or A and B), a register-tiled, "
         "double-buffered kernel and a warp-tiled one fed by multi-stage cp.async copies, with FFMA or on the "
         "tensor cores as three TF32 products a product (3xTF32)";
}

std::int64_t MatmulFamily::fetch_share(std::int64_t algo, std::int64_t tile, std::int64_t ept, std::int64_t bk) {
  // Guide kernels fetch TILE x TILE tiles, regtile TILE x BK ones, over (TILE/EPT)^2 threads
  // (warptile copies 16 bytes, or 4 to transpose, whatever its share).
  return (algo == regtile ? tile * bk : tile * tile) / threads(tile, ept);
}

std::int64_t MatmulFamily::static_shared_bytes(std::int64_t algo, std::int64_t tile, std::int64_t pad,
                                               std::int64_t bk) {
  if (warp_tiled(algo)) return 0;                                 // all of it dynamic
  if (algo == regtile) return 2 * 2 * bk * (tile + 4 * pad) * 4;  // two buffers of A and B, bk deep
  return (algo == ab_shared ? 2 : 1) * tile * (tile + pad) * 4;
}

std::int64_t MatmulFamily::dynamic_shared_bytes(const ConfigView& c) {
  if (!warp_tiled(c["algo"])) return 0;
  const std::int64_t rows = tile_rows(c["tile"], c["shape"]), columns = tile_columns(c["tile"], c["shape"]);
  const bool tensor = c["algo"] == tf32x3;  // pads A's rows by 8 and B's by 4 (see the template)
  const std::int64_t pad = (tensor ? 8 : 4) * c["pad"], bk = c["bk"];
  const std::int64_t a = c["transpose"] ? bk * (rows + pad) : rows * (bk + pad);
  return c["stages"] * (a + bk * (columns + (tensor ? 4 : 0))) * 4;
}

std::int64_t MatmulFamily::stream_k_blocks(const Problem& p, const ConfigView& c) {
  // The launch asks for one block per k-step at most, and the evaluator cuts it to the blocks the
  // device holds at once (fill_device).
  const std::int64_t k = p.integer("k");
  return std::min(tile_grid(p, c).count() * ((k + c["bk"] - 1) / c["bk"]), kMaxStreamKBlocks);
}

namespace {
std::int64_t block_threads(const ConfigView& c) { return MatmulFamily::threads(c["tile"], c["ept"], c["shape"]); }
bool register_tiled(const ConfigView& c) { return c["algo"] >= MatmulFamily::regtile; }
}  // namespace

Space MatmulFamily::space(const DeviceLimits& limits) const {
  Space s;
  s.labelled_axis("algo", {"a_shared", "ab_shared", "regtile", "warptile", "tf32x3"},
                  "guide tiles of A, of A and B, register-tiled, warp-tiled with a cp.async pipeline, or that "
                  "kernel on the tensor cores (each product as three TF32 products)")
      .axis("tile", {16, 32, 64, 128}, "block tile edge (warptile, tf32x3: the shorter edge)")
      .axis("ept", {1, 2, 4, 8}, "register tile edge: each thread computes ept x ept elements")
      .axis("pad", {0, 1}, "pad shared rows against bank conflicts")
      .axis("vec", {1, 4}, "widest global load in floats")
      .axis("minblocks", {1, 2}, "register-tiled: blocks per SM promised to the compiler, which caps registers")
      // 32 came last (values are stored, and appending keeps the older ones' indices).
      .axis("bk", {8, 16, 32}, "register-tiled: k depth of a step")
      .axis("splitk", {1, 2, 4}, "register-tiled: k split over this many blocks per tile, added with atomics")
      .labelled_axis("shape", {"square", "wide", "tall"},
                     "warptile, tf32x3: block tile tile x tile, tile x 2 tile or 2 tile x tile (others: square)")
      .axis("warp_rows", {4, 8}, "warptile, tf32x3: thread rows of a warp, 4 (32 x 64 warp tiles) or 8 (64 x 32)")
      .axis("stages", {2, 3, 4}, "warptile, tf32x3: shared buffers of the cp.async pipeline")
      .axis("swizzle", {0, 1}, "warptile: XOR-swizzle A's shared rows against bank conflicts instead of padding")
      .axis("raster", {1, 8}, "warptile, tf32x3: blocks walk C's tiles in groups of this many block rows (L2 reuse)")
      .axis("transpose", {0, 1},
            "warptile: A's tile transposed in shared memory (4-byte copies, float4 reads along m, fewer registers)")
      .axis("streamk", {0, 1},
            "warptile, tf32x3: a block per tile, or stream-K (as many blocks as the device holds, each an equal "
            "run of the tiles' k-steps; no part-empty last wave)")
      .require("stream-K: warptile's and tf32x3's square tiles without split k (it shares k out itself)",
               [](const ConfigView& c) {
                 return c["streamk"] == 0 || (warp_tiled(c["algo"]) && c["shape"] == square && c["splitk"] == 1);
               })
      .require("splitk > 1 only for the register-tiled kernels",
               [](const ConfigView& c) { return c["splitk"] == 1 || register_tiled(c); })
      .require("bk 16 only for the register-tiled kernels (the guide kernels step by their tile)",
               [](const ConfigView& c) { return c["bk"] == 8 || register_tiled(c); })
      .require("guide kernels use 16, 32 or 64 tiles",
               [](const ConfigView& c) { return register_tiled(c) || c["tile"] <= 64; })
      .require("regtile uses 64 or 128 tiles and 4 x 4 or 8 x 8 register tiles",
               [](const ConfigView& c) { return c["algo"] != regtile || (c["tile"] >= 64 && c["ept"] >= 4); })
      .require("warptile and tf32x3 use 128 tiles, 64 results a thread (ept 8) and 16-byte copies (vec 4)",
               [](const ConfigView& c) {
                 return !warp_tiled(c["algo"]) || (c["tile"] == 128 && c["ept"] == 8 && c["vec"] == 4);
               })
      .require(
          "shape, warp_rows, stages, swizzle, raster and transpose are warptile's (the others take the first "
          "values)",
          [](const ConfigView& c) {
            return warp_tiled(c["algo"]) || (c["shape"] == square && c["warp_rows"] == 4 && c["stages"] == 2 &&
                                             c["swizzle"] == 0 && c["raster"] == 1 && c["transpose"] == 0);
          })
      .require("warptile pads or swizzles A's row-major shared rows, one of the two; its transposed tile is padded",
               [](const ConfigView& c) {
                 return !warp_tiled(c["algo"]) ||
                        (c["transpose"] ? c["pad"] == 1 && c["swizzle"] == 0 : c["pad"] + c["swizzle"] == 1);
               })
      // Its fragments read A across k, two adjacent values a row, and B across n (see the template).
      .require("tf32x3 reads A row-major and padded (no transpose, no swizzle), in steps of 16 or 32 k",
               [](const ConfigView& c) {
                 return c["algo"] != tf32x3 || (c["transpose"] == 0 && c["pad"] == 1 && c["bk"] >= 16);
               })
      // Its running sums and a stage's sums are two register tiles, about 220 registers a thread.
      .require("tf32x3: square tiles, one block an SM (minblocks 1)",
               [](const ConfigView& c) { return c["algo"] != tf32x3 || (c["shape"] == square && c["minblocks"] == 1); })
      // Prunings that keep a brute force of the family at a few minutes. Pipelines 24 to 64
      // k-steps deep: 3 or 4 stages of 8, 2 or 3 of 16 or of 32 (three of 32 are 100 KiB a block,
      // two blocks an SM).
      .require("warptile: 3 or 4 stages with bk 8, 2 or 3 with bk 16 or 32",
               [](const ConfigView& c) {
                 return !warp_tiled(c["algo"]) || (c["bk"] == 8 ? c["stages"] >= 3 : c["stages"] <= 3);
               })
      // At 4096^3 a step's head (barrier, copies, its first shared reads) drew about half of the
      // stall samples at bk 8 (Nsight Compute, H200): bk 32 pays it once per 32 k for the
      // transposed tile, whose copies are one float per k anyway. The regtile kernel takes 8 or 16.
      .require("bk 32 only for warptile's transposed square tiles and tf32x3's square tiles",
               [](const ConfigView& c) {
                 return c["bk"] != 32 || (c["shape"] == square &&
                                          ((c["algo"] == warptile && c["transpose"] == 1) || c["algo"] == tf32x3));
               })
      // Padding and swizzling both make every shared read one wavefront: only the main candidate
      // (square tiles, whole k) tries both.
      .require("warptile: the row-major tile is padded only in square tiles without split k",
               [](const ConfigView& c) {
                 return c["algo"] != warptile || c["pad"] == 0 || c["transpose"] == 1 ||
                        (c["shape"] == square && c["splitk"] == 1);
               })
      // 512-thread blocks are held to 128 registers a thread, which bk 16 exceeds (spills).
      .require("warptile: wide and tall tiles step by bk 8",
               [](const ConfigView& c) { return c["algo"] != warptile || c["shape"] == square || c["bk"] == 8; })
      // The transposed tile fits 128 registers a thread (two 256-thread blocks an SM).
      .require("warptile: transposed square tiles promise 2 blocks per SM",
               [](const ConfigView& c) {
                 return !warp_tiled(c["algo"]) || c["transpose"] == 0 || c["shape"] != square || c["minblocks"] == 2;
               })
      // Split k is for problems with few tiles: square tiles, 2 blocks an SM, the natural order.
      .require("warptile: split k only with square tiles, 2 blocks per SM and raster 1",
               [](const ConfigView& c) {
                 return !warp_tiled(c["algo"]) || c["splitk"] == 1 ||
                        (c["shape"] == square && c["minblocks"] == 2 && c["raster"] == 1);
               })
      .require("warptile needs cp.async, tf32x3 also TF32 mma (sm_80 or newer)",
               [major = limits.cc_major](const ConfigView& c) { return !warp_tiled(c["algo"]) || major >= 8; })
      .require(
          "minblocks 2 only for register-tiled blocks of at most 256 threads (two must fit an SM's registers)",
          [](const ConfigView& c) { return c["minblocks"] == 1 || (register_tiled(c) && block_threads(c) <= 256); })
      .require("at least one warp per block", [](const ConfigView& c) { return block_threads(c) >= 32; })
      .require("vector loads only where a thread fetches at least 2 floats of a tile",
               [](const ConfigView& c) {
                 return c["vec"] == 1 || warp_tiled(c["algo"]) ||
                        fetch_share(c["algo"], c["tile"], c["ept"], c["bk"]) >= 2;
               })
      .require("threads per block <= device max threads per block",
               [max = limits.max_threads_per_block](const ConfigView& c) { return block_threads(c) <= max; })
      .require("static shared memory <= device limit without opt-in",
               [max = limits.max_shared_per_block](const ConfigView& c) {
                 return static_shared_bytes(c["algo"], c["tile"], c["pad"], c["bk"]) <= max;
               })
      .require("dynamic shared memory (minblocks blocks of it) <= device opt-in limit per block",
               [max = limits.max_shared_per_block_optin](const ConfigView& c) {
                 return c["minblocks"] * dynamic_shared_bytes(c) <= max;
               });
  return s;
}

Problem MatmulFamily::make_problem(std::int64_t m, std::int64_t n, std::int64_t k) {
  for (std::int64_t d : {m, n, k}) {
    if (d <= 0) throw UsageError("--n must be positive (got " + std::to_string(d) + ")");
    if (d > kMaxDimension) throw UsageError(fmt::format("matmul dimensions are at most {} (got {})", kMaxDimension, d));
  }
  return schema().make({{"m", m}, {"n", n}, {"k", k}});
}

const ProblemSchema& MatmulFamily::schema() {
  // The size is m * n * k, the multiply-adds: what nearest-size lookup should compare.
  static const ProblemSchema schema = ProblemSchema()
                                          .extent("m", "rows of A and C")
                                          .range(1, kMaxDimension)
                                          .extent("n", "columns of B and C")
                                          .range(1, kMaxDimension)
                                          .extent("k", "columns of A, rows of B")
                                          .range(1, kMaxDimension)
                                          .element_type("type", {"float32"}, "float32");
  return schema;
}

std::vector<Problem> MatmulFamily::problems(const ProblemRequest& request) const {
  if (request.type && *request.type != "float32")
    throw UsageError("unknown --type '" + *request.type + "' (this kernel takes: float32)");
  std::vector<Problem> list;
  for (std::int64_t size : request.sizes) list.push_back(make_problem(size, size, size));  // --n N: N x N x N
  if (!list.empty()) return list;
  // Two squares, and a non-square case that is no multiple of any tile in m, n or k (yet a
  // multiple of 4, so vector loads still apply).
  return {make_problem(1024, 1024, 1024), make_problem(4096, 4096, 4096), make_problem(3000, 1500, 2500)};
}

std::vector<std::string> MatmulFamily::problem_definitions(const Problem&) const { return {}; }

std::vector<BufferSpec> MatmulFamily::buffers(const Problem& p) const {
  const auto [m, n, k] = dims_of(p);
  return {
      {"a", m * k * 4, BufferRole::input}, {"b", k * n * 4, BufferRole::input}, {"c", m * n * 4, BufferRole::output}};
}

std::vector<Step> MatmulFamily::plan(const Problem& p, const ConfigView& c) const {
  const auto [m, n, k] = dims_of(p);
  const TileGrid tiles = tile_grid(p, c);
  const Dim3 grid{static_cast<unsigned>(tiles.columns), static_cast<unsigned>(tiles.rows),
                  static_cast<unsigned>(c["splitk"])};
  const Dim3 block{static_cast<unsigned>(threads(c["tile"], c["ept"], c["shape"]))};
  // Rows of A and B start 16-byte aligned only when k and n are multiples of 4; otherwise the
  // scalar-load kernel of the same config runs (warptile's copies 4 bytes at a time).
  const bool aligned_rows = k % 4 == 0 && n % 4 == 0;
  const char* const kernels[] = {"matmul_guide", "matmul_guide", "matmul_regtile", "matmul_warptile",
                                 "matmul_warptile"};
  const std::string kernel = std::string(kernels[c["algo"]]) + (aligned_rows ? "" : "_scalar");
  const auto shared = static_cast<unsigned>(dynamic_shared_bytes(c));
  if (c["streamk"] == 1) {
    KernelLaunch launch{
        kernel,
        Dim3{static_cast<unsigned>(stream_k_blocks(p, c))},
        block,
        shared,
        {BufferArg{"a"}, BufferArg{"b"}, BufferArg{"c"}, static_cast<std::int32_t>(m), static_cast<std::int32_t>(n),
         static_cast<std::int32_t>(k), BufferArg{"workspace"}, BufferArg{"tickets"}}};
    launch.fill_device = true;
    return {MemsetStep{"tickets", 0, tiles.count() * 4}, launch};  // a ticket per tile, counted up from 0
  }
  const KernelLaunch launch{kernel,
                            grid,
                            block,
                            shared,
                            {BufferArg{"a"}, BufferArg{"b"}, BufferArg{"c"}, static_cast<std::int32_t>(m),
                             static_cast<std::int32_t>(n), static_cast<std::int32_t>(k)}};
  if (c["splitk"] == 1) return {launch};
  return {MemsetStep{"c", 0, m * n * 4}, launch};  // the splits add into C
}

std::vector<BufferSpec> MatmulFamily::scratch(const Problem& p, const ConfigView& c) const {
  if (c["streamk"] == 0) return {};
  const TileGrid tiles = tile_grid(p, c);
  // Two parts of a tile a block: where its run starts and where it ends.
  return {{"workspace", 2 * stream_k_blocks(p, c) * tiles.tile_rows * tiles.tile_columns * 4, BufferRole::scratch},
          {"tickets", tiles.count() * 4, BufferRole::scratch}};
}

void MatmulFamily::generate_inputs(const Problem&, std::uint64_t seed, HostBuffers& inputs) const {
  fill_uniform(inputs.as<float>("a"), kLow, kHigh, seed);
  fill_uniform(inputs.as<float>("b"), kLow, kHigh, seed ^ 0xb0b0b0b0ull);
}

MatmulFamily::Sample MatmulFamily::reference_sample(std::int64_t m, std::int64_t n, std::int64_t k) {
  Sample sample;
  if (m * n * k <= kFullReferenceMacs) {
    for (std::int64_t i = 0; i < m; ++i) sample.rows.push_back(i);
    return sample;
  }
  // The first and last rows and columns (where partial tiles are), and random ones between,
  // fixed for the problem so that every config is checked on the same elements.
  auto pick = [](std::int64_t extent, std::int64_t count, std::uint64_t seed) {
    std::vector<std::int64_t> chosen{0, extent - 1};
    std::mt19937_64 random(seed);
    std::uniform_int_distribution<std::int64_t> any(1, std::max<std::int64_t>(1, extent - 2));
    for (std::int64_t tries = 0;
         static_cast<std::int64_t>(chosen.size()) < std::min(count, extent) && tries < 100 * count; ++tries)
      if (const std::int64_t i = any(random); std::find(chosen.begin(), chosen.end(), i) == chosen.end())
        chosen.push_back(i);
    std::sort(chosen.begin(), chosen.end());
    chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
    return chosen;
  };
  const auto seed = static_cast<std::uint64_t>(m * 1000003 + n * 1009 + k);
  sample.rows = pick(m, std::max<std::int64_t>(2, kSampleMacs / (n * k)), seed);
  sample.columns = pick(n, std::max<std::int64_t>(2, kSampleMacs / (m * k)), seed ^ 0xc01);
  return sample;
}

void matmul_rows(std::span<const float> a, std::span<const float> b, std::int64_t n, std::int64_t k,
                 std::span<const std::int64_t> rows, std::span<double> out) {
  // Row by row, streaming B: the inner loop runs along contiguous rows of B and of the result.
  for (std::size_t r = 0; r < rows.size(); ++r) {
    double* c = out.data() + r * n;
    std::fill(c, c + n, 0.0);
    const float* a_row = a.data() + rows[r] * k;
    for (std::int64_t p = 0; p < k; ++p) {
      const double ap = a_row[p];
      const float* b_row = b.data() + p * n;
      for (std::int64_t j = 0; j < n; ++j) c[j] += ap * static_cast<double>(b_row[j]);
    }
  }
}

void matmul_column(std::span<const float> a, std::span<const float> b, std::int64_t m, std::int64_t n, std::int64_t k,
                   std::int64_t j, std::span<double> out) {
  std::vector<double> column(static_cast<std::size_t>(k));
  for (std::int64_t p = 0; p < k; ++p) column[p] = b[p * n + j];
  for (std::int64_t i = 0; i < m; ++i) {
    const float* a_row = a.data() + i * k;
    double sum = 0;
    for (std::int64_t p = 0; p < k; ++p) sum += static_cast<double>(a_row[p]) * column[p];
    out[i] = sum;
  }
}

// The expected C holds the exact result, rounded to float, where the reference computed it and
// NaN elsewhere: "not computed", never a value a correct kernel could match.
HostBuffers MatmulFamily::reference(const Problem& p, const HostBuffers& inputs) const {
  const auto [m, n, k] = dims_of(p);
  const auto a = inputs.as<float>("a");
  const auto b = inputs.as<float>("b");
  HostBuffers expected;
  expected.at("c").resize(static_cast<std::size_t>(m * n * 4));
  auto c = expected.as<float>("c");
  std::fill(c.begin(), c.end(), std::numeric_limits<float>::quiet_NaN());

  const Sample sample = reference_sample(m, n, k);
  std::vector<double> rows(sample.rows.size() * static_cast<std::size_t>(n));
  matmul_rows(a, b, n, k, sample.rows, rows);
  for (std::size_t r = 0; r < sample.rows.size(); ++r)
    for (std::int64_t j = 0; j < n; ++j) c[sample.rows[r] * n + j] = static_cast<float>(rows[r * n + j]);
  std::vector<double> column(static_cast<std::size_t>(m));
  for (std::int64_t j : sample.columns) {
    matmul_column(a, b, m, n, k, j, column);
    for (std::int64_t i = 0; i < m; ++i) c[i * n + j] = static_cast<float>(column[i]);
  }
  return expected;
}

// Every element must lie where a sum of k products of inputs in [kLow, kHigh) can (which
// rejects NaN, infinities, and elements never written: the poison is a tiny negative float);
// elements the reference computed must also be within the relative tolerance, and their mean
// relative error within drift_bound (sums that all err one way).
Verdict MatmulFamily::compare(const Problem& p, const HostBuffers& expected, const HostBuffers& actual) const {
  const auto [m, n, k] = dims_of(p);
  const auto want = expected.as<float>("c");
  const auto got = actual.as<float>("c");
  if (want.size() != got.size())
    return {false, fmt::format("c: expected {} values, got {}", want.size(), got.size()), 0};
  const double rtol = relative_tolerance(k);
  const double lowest = static_cast<double>(k) * kLow * kLow * (1 - rtol);
  const double highest = static_cast<double>(k) * kHigh * kHigh * (1 + rtol);
  RelativeErrors errors;  // of the elements the reference computed
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = got[i];
    const auto where = [&] {
      return fmt::format("c[{}] (row {}, column {})", i, static_cast<std::int64_t>(i) / n,
                         static_cast<std::int64_t>(i) % n);
    };
    if (!(g >= lowest && g <= highest))
      return {
          false,
          fmt::format("{} = {}: outside [{}, {}], where any result of these inputs lies", where(), g, lowest, highest),
          static_cast<std::int64_t>(i)};
    const double w = want[i];
    if (std::isnan(w)) continue;
    if (!(std::fabs(g - w) <= rtol * w))
      return {false, fmt::format("{}: expected {}, got {} (rtol {:.3g})", where(), w, g, rtol),
              static_cast<std::int64_t>(i)};
    errors.add(i, g, w);
  }
  if (std::fabs(errors.mean()) > drift_bound(k))
    return {false,
            fmt::format("c: the results drift: mean relative error {:.3g} over the {} elements checked (at most "
                        "{:.3g} for sums rounded to nearest; the largest, {:.3g}, at element {})",
                        errors.mean(), errors.count, drift_bound(k), errors.largest, errors.largest_at),
            static_cast<std::int64_t>(errors.largest_at)};
  (void)m;
  return {};
}

Work MatmulFamily::work(const Problem& p) const {
  const auto [m, n, k] = dims_of(p);
  const double md = static_cast<double>(m), nd = static_cast<double>(n), kd = static_cast<double>(k);
  return {(md * kd + kd * nd + md * nd) * 4, 2 * md * nd * kd};
}

std::unique_ptr<Family> make_matmul_family() { return std::make_unique<MatmulFamily>(); }

}  // namespace cutune
