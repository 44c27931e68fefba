#include "powersum.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/error.hpp"
#include "data.hpp"
#include "verify.hpp"

namespace cutune {
namespace {

// The generator's ranges, which the tolerance depends on. Points follow a Pareto law with
// x_min = 1 and tail exponent 1.5 (a heavy tail, as in the study's data), cut at 10^4;
// exponents are the study's kind of MLE candidates, between 1.5 and 3.5.
constexpr double kParetoTail = 1.5;
constexpr double kTailCut = 1e-6;  // largest point: kTailCut^(-1/kParetoTail) = 10^4
constexpr double kAlphaMin = 1.5, kAlphaMax = 3.5;

double largest_point() { return std::pow(kTailCut, -1 / kParetoTail); }

std::int64_t window_of(const Problem& p) { return p.integer("w"); }
std::int64_t exponents_of(const Problem& p) { return p.integer("a"); }
// Problems stored before the field existed had random exponents.
bool grid_alphas(const Problem& p) { return p.text("alphas") == "grid"; }

}  // namespace

std::string PowersumFamily::summary() const {
  return "power-law MLE sums X-(i,j), X+(i,j) of |x[k]-x[i]|^alpha[j] in double; block per (i,j), per j, lane "
         "groups, symmetric tiles, or a block per (i, line of exponents) sharing the ladder's starts; powers by "
         "pow, exp and log, a ladder over evenly spaced exponents, or a table of 2^(i/16)";
}

std::int64_t PowersumFamily::combine_columns(std::int64_t block, std::int64_t jt) {
  std::int64_t columns = 1;
  while (columns < jt && columns < 32) columns *= 2;
  while (columns > 8 && block * (columns + 1) * 8 > 40 * 1024) columns /= 2;
  return columns;
}

std::int64_t PowersumFamily::static_shared_bytes(std::int64_t map, std::int64_t block, std::int64_t jt) {
  if (map == sym) return (2 * kSymTile + 2 * kSymTile * (kSymTile + 1)) * 8;
  if (is_diag(map)) return diag_rows(map) * kSymTile * kSymTile * 8;  // the tile's logs
  // tile and line: the transpose that adds up each group's sums, a row of combine_columns + 1 doubles a thread.
  return map == tile || map == line ? block * (combine_columns(block, jt) + 1) * 8 : 2 * block * 8;
}

std::int64_t PowersumFamily::dynamic_shared_bytes(std::int64_t map, std::int64_t block, std::int64_t stage,
                                                  std::int64_t window) {
  if (map == line) return (1 + block / 32) * kLineChunk * 8;  // per k of a chunk: d^step and each warp's start
  return stage ? window * 8 : 0;
}

std::int64_t PowersumFamily::diag_tiles(std::int64_t map, std::int64_t w) {
  // Strip r of 32 diag_rows(map) rows meets the column tiles from its own first row on.
  const std::int64_t rows = 32 * diag_rows(map), column_tiles = (w + kSymTile - 1) / kSymTile;
  std::int64_t tiles = 0;
  for (std::int64_t r = 0; r * rows < w; ++r) tiles += column_tiles - r * diag_rows(map);
  return tiles;
}

Space PowersumFamily::space(const DeviceLimits& limits) const {
  Space s;
  s.labelled_axis(
       "map", {"pair", "exponent", "tile", "sym", "line", "diag", "diag2"},
       "(i, j) to blocks: block per pair, per exponent, lane groups, symmetric tiles of pairs, a block per "
       "(i, line of block/32 * jt exponents) whose warps share each k's ladder start, or symmetric tiles whose "
       "warps take jt exponents each, lanes owning one row (diag) or two (diag2) and passing the column sums "
       "along, adding them with atomics into zeroed sums")
      .axis("block", {64, 128, 256, 512}, "threads per block")
      .axis("fold", {1, 8, 32}, "tree maps: fold stops at this stride; thread 0 adds the last 2*fold sums")
      .labelled_axis("stage", {"global", "shared"}, "read the window from global memory or stage it in shared")
      .axis("ksplit", {1, 8, 32}, "tile map: lanes splitting k for one (i, exponent tile)")
      // jt = 2 came last (values are stored, but appended keeps every index of the older ones).
      .axis("jt", {1, 4, 8, 10, 16, 20, 32, 40, kMaxExponentsPerGroup, 2},
            "tile, line, sym and diag maps: exponents per lane group (per warp for line and diag, per block for sym)")
      .labelled_axis("term", {"pow", "explog", "ladder", "tabexp", "tabexp32"},
                     "pow(d, a) per term; exp(a log d) with log d shared by jt exponents; where the exponents are "
                     "evenly spaced, d^a0 times (d^step)^jj: two exp per jt exponents; or 2^(a log2 d) through a "
                     "table of 2^(i/16) (tabexp) or 2^(i/32) (tabexp32, diag maps) and a short polynomial, log2 d "
                     "shared by jt exponents")
      .require("tree maps use one lane group of one exponent and pow (ksplit = jt = 1, term = pow)",
               [](const ConfigView& c) {
                 return c["map"] >= tile || (c["ksplit"] == 1 && c["jt"] == 1 && c["term"] == pow_term);
               })
      .require("tile, sym, line and diag maps have no tree to fold (fold = 1)",
               [](const ConfigView& c) { return c["map"] < tile || c["fold"] == 1; })
      .require("sym and the diag maps load their own tiles of x and split no k (stage = global, ksplit = 1)",
               [](const ConfigView& c) {
                 return (c["map"] != sym && c["map"] < diag) || (c["stage"] == 0 && c["ksplit"] == 1);
               })
      // Registers: a diag lane holds row and column sums and the exponents, 3 jt doubles (4 in diag2).
      .require(
          "the diag maps take their powers through a table, a warp's jt <= 16, a block's at most 80 exponents "
          "(term = tabexp or tabexp32, jt <= 16, block/32 * jt <= 80)",
          [](const ConfigView& c) {
            return c["map"] < diag ||
                   (is_table(c["term"]) && c["jt"] <= 16 && c["block"] / 32 * c["jt"] <= kMaxExponentsPerGroup);
          })
      // At w = 500 and A = 80, block 128 with jt = 4 is 680 equal blocks on 132 SMs (6 on the busiest, 5.15 on
      // average); jt = 2 halves each block's exponents for twice the blocks, a finer tail, at the price of
      // computing each tile's logs for half as many exponents. The other maps have no use for it.
      .require("jt = 2 in the diag maps only (a finer split of their blocks' exponents)",
               [](const ConfigView& c) { return c["jt"] != 2 || is_diag(c["map"]); })
      .require("tabexp32 in the diag maps only",
               [](const ConfigView& c) { return c["term"] != tabexp32_term || is_diag(c["map"]); })
      // The diag maps share each tile's logs among the block's warps, so jt = 1 still shares them
      // (block/32 exponents): one column sum per warp, fewer registers, more warps per SM.
      .require("explog, ladder and tabexp share log d between exponents (jt > 1, or a diag map)",
               [](const ConfigView& c) { return c["term"] == pow_term || c["jt"] > 1 || is_diag(c["map"]); })
      .require(
          "tabexp in the tile map reads the window from global memory with lanes splitting k (stage = global, "
          "ksplit >= 8)",
          [](const ConfigView& c) {
            return c["term"] != tabexp_term || c["map"] != tile || (c["stage"] == 0 && c["ksplit"] >= 8);
          })
      .require("ladder in the tile and line maps only",
               [](const ConfigView& c) { return c["term"] != ladder_term || c["map"] == tile || c["map"] == line; })
      .require(
          "line runs the ladder, a warp's lanes splitting k, from no staged window (term = ladder, ksplit = 32, "
          "stage = global)",
          [](const ConfigView& c) {
            return c["map"] != line || (c["term"] == ladder_term && c["ksplit"] == 32 && c["stage"] == 0);
          })
      // Past 80 exponents the ladder's roundings outgrow the tolerance (see tolerance()).
      .require(
          "a line holds at most 80 exponents (block/32 * jt <= 80)",
          [](const ConfigView& c) { return c["map"] != line || c["block"] / 32 * c["jt"] <= kMaxExponentsPerGroup; })
      // Beyond 8 exponents per group a thread holds 16+ accumulators: worth it where the cost per
      // (i, k) is shared by them (ladder, with lane groups splitting k so that enough threads
      // run), or in sym, whose exponents are a loop, not registers.
      // tabexp's terms are short enough (9 FP64 operations) that the per-k log and the loop around
      // them matter: up to 20 exponents share them, with lanes splitting k for enough threads.
      .require("jt > 8: ladder with ksplit >= 8, tabexp with ksplit >= 8 and jt <= 20, sym with jt <= 32, or diag",
               [](const ConfigView& c) {
                 return c["jt"] <= 8 || (c["term"] == ladder_term && c["ksplit"] >= 8) ||
                        (c["term"] == tabexp_term && c["ksplit"] >= 8 && c["jt"] <= 20) ||
                        (c["map"] == sym && c["jt"] <= 32) || c["map"] >= diag;
               })
      .require("block <= device max threads per block",
               [max = limits.max_threads_per_block](const ConfigView& c) { return c["block"] <= max; })
      .require("shared memory (trees + the largest staged window) <= device opt-in limit per block",
               [max = limits.max_shared_per_block_optin](const ConfigView& c) {
                 return static_shared_bytes(c["map"], c["block"], c["jt"]) +
                            dynamic_shared_bytes(c["map"], c["block"], c["stage"], kMaxWindow) <=
                        max;
               });
  return s;
}

Problem PowersumFamily::make_problem(std::int64_t window, std::int64_t exponents, Alphas alphas) {
  if (window <= 0) throw UsageError("--n must be positive (got " + std::to_string(window) + ")");
  if (window > kMaxWindow)
    throw UsageError(fmt::format("powersum windows hold at most {} points (got {})", kMaxWindow, window));
  if (exponents <= 0 || exponents > 65535) throw UsageError("powersum needs 1 to 65535 exponents");
  return schema().make({{"w", window}, {"a", exponents}, {"alphas", alphas == Alphas::grid ? "grid" : "random"}});
}

const ProblemSchema& PowersumFamily::schema() {
  static const ProblemSchema schema =
      ProblemSchema()
          .extent("w", "points in the window")
          .range(1, kMaxWindow)
          .extent("a", "candidate exponents")
          .range(1, 65535)
          .enumeration("alphas", {"grid", "random"}, "grid",
                       "exponents evenly spaced over [1.5, 3.5], or sorted uniform draws")
          .element_type("type", {"float64"}, "float64");
  return schema;
}

std::vector<Problem> PowersumFamily::problems(const ProblemRequest& request) const {
  if (request.type && *request.type != "float64")
    throw UsageError("unknown --type '" + *request.type + "' (this kernel takes: float64)");
  // The study's window of 500 points and 80 candidate exponents, a window four times as long,
  // and the study's window with exponents that are no grid (where the ladder cannot help).
  if (request.sizes.empty())
    return {make_problem(500), make_problem(2000), make_problem(500, kDefaultExponents, Alphas::random)};
  std::vector<Problem> list;
  for (std::int64_t w : request.sizes) list.push_back(make_problem(w));
  return list;
}

std::vector<std::string> PowersumFamily::problem_definitions(const Problem&) const { return {}; }

std::vector<BufferSpec> PowersumFamily::buffers(const Problem& p) const {
  const std::int64_t w = window_of(p), a = exponents_of(p);
  // One output: the minus sums (w * a doubles, exponent-major) and then the plus sums. The maps
  // that add into zeroed sums then zero both with one memset; two memsets cost the timed run a
  // second memset launch, a few percent of the study's window.
  return {{"x", w * 8, BufferRole::input},
          {"alpha", a * 8, BufferRole::input},
          {"sums", 2 * w * a * 8, BufferRole::output}};
}

std::vector<Step> PowersumFamily::plan(const Problem& p, const ConfigView& c) const {
  const std::int64_t w = window_of(p), a = exponents_of(p);
  const std::vector<KernelArg> args{
      BufferArg{"x"},    BufferArg{"alpha"},          static_cast<std::int32_t>(w), static_cast<std::int32_t>(a),
      BufferArg{"sums"}, BufferArg{"sums", w * a * 8}};
  const Dim3 block{static_cast<unsigned>(c["block"])};
  const auto shared = static_cast<unsigned>(dynamic_shared_bytes(c["map"], c["block"], c["stage"], w));
  switch (c["map"]) {
    case pair:
      return {
          KernelLaunch{"powersum_pair", Dim3{static_cast<unsigned>(w), static_cast<unsigned>(a)}, block, shared, args}};
    case exponent:
      return {KernelLaunch{"powersum_exponent", Dim3{static_cast<unsigned>(a)}, block, shared, args}};
    case sym: {
      // Tiles above the diagonal add into both sums: they start from zero.
      const std::int64_t side = (w + kSymTile - 1) / kSymTile;
      const Dim3 grid{static_cast<unsigned>(side * (side + 1) / 2), static_cast<unsigned>((a + c["jt"] - 1) / c["jt"])};
      return {MemsetStep{"sums", 0, 2 * w * a * 8}, KernelLaunch{"powersum_sym", grid, block, 0, args}};
    }
    case diag:
    case diag2: {
      const std::int64_t exponents_per_block = c["block"] / 32 * c["jt"];
      const Dim3 grid{static_cast<unsigned>(diag_tiles(c["map"], w)),
                      static_cast<unsigned>((a + exponents_per_block - 1) / exponents_per_block)};
      // As sym: tiles above the diagonal add into both sums, which start from zero.
      return {MemsetStep{"sums", 0, 2 * w * a * 8}, KernelLaunch{"powersum_diag", grid, block, 0, args}};
    }
    case line: {
      const std::int64_t exponents_per_line = c["block"] / 32 * c["jt"];
      const Dim3 grid{static_cast<unsigned>(w),
                      static_cast<unsigned>((a + exponents_per_line - 1) / exponents_per_line)};
      return {KernelLaunch{"powersum_line", grid, block, shared, args}};
    }
    default: {
      const std::int64_t groups = c["block"] / c["ksplit"];
      const Dim3 grid{static_cast<unsigned>((w + groups - 1) / groups),
                      static_cast<unsigned>((a + c["jt"] - 1) / c["jt"])};
      return {KernelLaunch{"powersum_tile", grid, block, shared, args}};
    }
  }
}

void PowersumFamily::generate_inputs(const Problem& p, std::uint64_t seed, HostBuffers& inputs) const {
  // Pareto points by inversion of uniform draws in (kTailCut, 1], sorted as the study's windows are.
  auto x = inputs.as<double>("x");
  fill_uniform(x, kTailCut, 1.0, seed);
  for (double& v : x) v = std::pow(v, -1 / kParetoTail);
  std::sort(x.begin(), x.end());
  auto alpha = inputs.as<double>("alpha");
  if (grid_alphas(p)) {
    const double step = alpha.size() > 1 ? (kAlphaMax - kAlphaMin) / static_cast<double>(alpha.size() - 1) : 0.0;
    for (std::size_t j = 0; j < alpha.size(); ++j) alpha[j] = kAlphaMin + static_cast<double>(j) * step;
  } else {
    fill_uniform(alpha, kAlphaMin, kAlphaMax, seed ^ 0xa1fa);
    std::sort(alpha.begin(), alpha.end());
  }
}

void power_sums(std::span<const double> x, std::span<const double> alpha, std::span<double> minus,
                std::span<double> plus) {
  const std::size_t w = x.size();
  std::vector<long double> m(w), p(w);
  for (std::size_t j = 0; j < alpha.size(); ++j) {
    const double a = alpha[j];
    std::fill(m.begin(), m.end(), 0.0L);
    std::fill(p.begin(), p.end(), 0.0L);
    // |x[k] - x[i]|^a is symmetric in (i, k): each pair is computed once, for plus[i] and minus[k].
    for (std::size_t i = 0; i < w; ++i) {
      m[i] += std::pow(0.0, a);  // the k = i term
      for (std::size_t k = i + 1; k < w; ++k) {
        const long double t = std::pow(std::fabs(x[k] - x[i]), a);
        p[i] += t;
        m[k] += t;
      }
    }
    for (std::size_t i = 0; i < w; ++i) {
      minus[j * w + i] = static_cast<double>(m[i]);
      plus[j * w + i] = static_cast<double>(p[i]);
    }
  }
}

HostBuffers PowersumFamily::reference(const Problem& p, const HostBuffers& inputs) const {
  const std::int64_t w = window_of(p), a = exponents_of(p);
  HostBuffers expected;
  expected.at("sums").resize(static_cast<std::size_t>(2 * w * a * 8));
  const auto sums = expected.as<double>("sums");
  const auto half = static_cast<std::size_t>(w * a);
  power_sums(inputs.as<double>("x"), inputs.as<double>("alpha"), sums.first(half), sums.subspan(half));
  return expected;
}

// Every sum has at most w non-negative terms t = d^a, a in [a_min, a_max], L = ln d.
//  - Summing them in any order (any map, fold or k split) costs at most gamma_w relative.
//  - Each term on the GPU:
//    pow is within 2 ulp (4u) in CUDA's math library.
//    explog computes exp(a L): log and exp are within 1 ulp each (CUDA's; the ladder's starts take
//    straight_math.cuh's, which test_straight_math measures within 1 ulp), and the argument z = a L is
//    off by at most 3u|z|, which exp turns into a relative error 3u|z|.
//    tabexp computes 2^(a * 16 log2 d / 16): 16 log2 d is within 3u relative (log, constant,
//    product), the product with a is exact inside the fmas, so the argument is again off by at most
//    3u|z|; the table and polynomial are within 3u (test_straight_math measures it), one u more
//    than exp's ulp, inside the (2 jt_max + 1)u below, which only the ladder's multiplies use; tabexp32 (32 log2 d,
//    a table of 32 and a shorter polynomial, the log through a table too) the same with 4u for the table and
//    polynomial and 4u|z| for the argument (within the 11u a_max|L| below). Terms below 2^-1000 come
//    out as values below 2^-1000 (the clamp of log2 d): absolute errors under 1e-301, far inside atol. ladder computes
//    d^a0 (d^step)^jj: (u + 3u a0|L|) + jj (u + 3u step|L|) + jj u for the multiplies (at most jj of them round,
//    however the template splits them into chains), that is (2 jj + 1)u + 3u a|L|; and the exponents may sit off the
//    line a0 + jj step by the template's LADDER_SLACK (8u a relative), which adds 8u a_max|L|. The line map starts warp
//    g's ladder at d^a0 times (d^step)^jt, g times over, the power by squaring (a power n by squaring rounds R(n) =
//    floor(log2 n) + popcount(n) - 1 times): term J = g jt + jj of the line sees J copies of d^step's error and jj + g
//    (R(jt) + 1) roundings, at most 48 over every line the space allows (16 warps of jt = 4: g = 15, jj = 3), so J + 48
//    with J < 80: within the 2 jt_max + 1 below. The host test replays this arithmetic.
//    So every term is within (2 jt_max + 1)u + 11u a_max|L| relative. For d >= 1, |L| <= ln D
//    with D the largest difference. For d < 1 the |L| part is absolute instead:
//    11u a_max |L| d^a <= 11u a_max |L| e^(-a_min |L|) <= 11u (a_max / a_min) / e.
//  - The reference uses the host's pow (within 1 ulp), sums in long double and rounds once: 3u.
PowersumFamily::Tolerance PowersumFamily::tolerance(std::int64_t window) {
  const double u = kDoubleUnitRoundoff;
  const double w = static_cast<double>(window);
  constexpr double argument_error = 11;  // in units of u a_max |L|
  const double per_term = 2.0 * kMaxExponentsPerGroup + 1;
  return {gamma_bound(w, u) + u * (argument_error * kAlphaMax * std::log(largest_point()) + per_term + 3),
          w * argument_error * u * (kAlphaMax / kAlphaMin) / std::numbers::e};
}

// Within the tolerance, and never negative: a sum of non-negative terms is non-negative in any
// floating-point order, while the poison of an unwritten output is a tiny negative double that
// the absolute tolerance alone would let through for the empty sums.
Verdict PowersumFamily::compare(const Problem& p, const HostBuffers& expected, const HostBuffers& actual) const {
  const Tolerance t = tolerance(window_of(p));
  const auto want = expected.as<double>("sums");
  const auto got = actual.as<double>("sums");
  const std::size_t half = got.size() / 2;
  // Messages name the half (minus or plus) and the index in it; first_bad_index is the index in sums.
  const auto where = [&](std::size_t i) { return fmt::format("{}[{}]", i < half ? "minus" : "plus", i % half); };
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(got[i] >= 0))
      return {false, fmt::format("{} = {}: negative or NaN, yet a sum of non-negative terms", where(i), got[i]),
              static_cast<std::int64_t>(i)};
    else if (!(std::fabs(got[i] - want[i]) <= t.rtol * want[i] + t.atol))
      return {
          false,
          fmt::format("{}: expected {}, got {} (rtol {:.3g}, atol {:.3g})", where(i), want[i], got[i], t.rtol, t.atol),
          static_cast<std::int64_t>(i)};
  return {};
}

Work PowersumFamily::work(const Problem& p) const {
  const auto w = static_cast<double>(window_of(p)), a = static_cast<double>(exponents_of(p));
  // Bytes: the window and exponents read once, both sums written once. Flops: a subtraction,
  // a power (counted as one) and an addition per term.
  return {(w + a) * 8 + 2 * w * a * 8, 3 * w * w * a};
}

std::unique_ptr<Family> make_powersum_family() { return std::make_unique<PowersumFamily>(); }

}  // namespace cutune
