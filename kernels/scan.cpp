#include "scan.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"
#include "data.hpp"
#include "element_types.hpp"
#include "verify.hpp"

namespace cutune {
namespace {

const std::vector<std::string> kTypes{"int32", "uint32", "int64"};
constexpr std::uint64_t kNoError = ~0ull;

std::int64_t tiles_of(const Problem& p, const ConfigView& c) {
  const std::int64_t tile = c["block"] * c["ept"];
  return (p.integer("n") + tile - 1) / tile;
}

std::int64_t padded_size(std::int64_t n, std::int64_t pad) { return pad ? n + n / 32 + 1 : n; }

template <class T>
void generate(const Problem& p, std::uint64_t seed, HostBuffers& inputs) {
  const auto n = p.integer("n");
  const auto starts_offset = p.integer("starts_offset");
  const auto stops_offset = p.integer("stops_offset");
  auto starts = inputs.as<T>("starts");
  auto stops = inputs.as<T>("stops");
  // Ragged lists of 0..31 elements starting anywhere below 10^6: real, non-zero data, with a
  // few empty lists among them. The offset prefix holds noise that must never be read.
  RandomStream noise(seed ^ 0x6e6f697365ull);
  for (std::int64_t i = 0; i < starts_offset; ++i) starts[i] = static_cast<T>(noise.below(1001));
  for (std::int64_t i = 0; i < stops_offset; ++i) stops[i] = static_cast<T>(noise.below(1001));
  fill_in_chunks(static_cast<std::size_t>(n), seed, [&](std::size_t first, std::size_t count, RandomStream& random) {
    for (std::size_t i = first; i < first + count; ++i) {
      const std::uint64_t bits = random.next();
      const auto start = static_cast<std::int64_t>(((bits >> 32) * 1'000'000) >> 32);  // 0 .. 999 999
      starts[starts_offset + i] = static_cast<T>(start);
      stops[stops_offset + i] = static_cast<T>(start + static_cast<std::int64_t>(bits & 31));  // + 0 .. 31
    }
  });
}

template <class T>
void run_reference(const Problem& p, const HostBuffers& inputs, HostBuffers& expected) {
  const auto n = p.integer("n");
  const auto starts = inputs.as<T>("starts").subspan(p.integer("starts_offset"), n);
  const auto stops = inputs.as<T>("stops").subspan(p.integer("stops_offset"), n);
  expected.at("tooffsets").resize((n + 1) * sizeof(std::int64_t));
  expected.at("error").resize(sizeof(std::uint64_t));
  const auto bad = compact_offsets<T>(starts, stops, expected.as<std::int64_t>("tooffsets"));
  expected.as<std::uint64_t>("error")[0] = bad ? static_cast<std::uint64_t>(*bad) : kNoError;
}

template <class F>
void dispatch_type(const std::string& dtype, F&& f) {
  if (dtype == "int32")
    f(std::int32_t{});
  else if (dtype == "uint32")
    f(std::uint32_t{});
  else if (dtype == "int64")
    f(std::int64_t{});
  else
    throw Error("scan: unsupported element type " + dtype);
}

}  // namespace

std::string ScanFamily::summary() const {
  return "compact_offsets: int64 offsets from starts/stops (int32, uint32, int64); blelloch, warp-shuffle, "
         "decoupled look-back (blocked or warp-striped tiles, the latter with cache-hint and prefetch variants)";
}

std::int64_t ScanFamily::static_shared_bytes(std::int64_t algo, std::int64_t block, std::int64_t pad) {
  const std::int64_t scan_words = algo == blelloch ? padded_size(block, pad) : block / 32;
  return (scan_words + 3) * 8;  // + block_total, block_prefix, tile (padded to 8)
}

std::int64_t ScanFamily::dynamic_shared_bytes(std::int64_t algo, std::int64_t block, std::int64_t ept,
                                              std::int64_t pad) {
  // The staging of the blocked layouts' stores; striped stores straight from registers.
  return ept == 1 || striped_layout(algo) ? 0 : padded_size(block * ept, pad) * 8;
}

Space ScanFamily::space(const DeviceLimits& limits) const {
  Space s;
  // striped and its variants came after the others: appended, so that blelloch to striped keep
  // their numbers. Configs are stored by label ("algo=striped_pf_cs"), the number is only what the
  // template reads as CUTUNE_ALGO: striped_st_cs, striped_st_ef and striped_pf, never the fastest
  // at any size on an H100 (2^20 to 2^27), were taken out again, and stored results of those
  // labels no longer parse (tune skips them in warm starts).
  s.labelled_axis("algo",
                  {"blelloch", "warp", "lookback", "striped", "striped_ld_cs", "striped_ld_nc", "striped_pf_cs"},
                  "block scan algorithm and multi-block scheme (striped: look-back over warp-striped tiles; "
                  "striped_*: the same with streaming loads (ld_cs), non-allocating loads with 256-byte L2 "
                  "fetches (ld_nc), or an L2 prefetch of the tile a wave ahead with streaming loads and stores "
                  "(pf_cs))")
      .axis("block", {64, 128, 256, 512, 1024}, "threads per block")
      .axis("ept", {1, 2, 4, 8, 12, 16, 24, 32}, "elements per thread")
      .axis("vec", {1, 2, 4}, "elements per vector load")
      .axis("pad", {0, 1}, "pad shared arrays against bank conflicts")
      .require("ept % vec == 0")
      .require("pad only where shared arrays are strided (blelloch tree, or staged stores when ept > 1)",
               [](const ConfigView& c) {
                 return c["pad"] == 0 || c["algo"] == blelloch || (!striped_layout(c["algo"]) && c["ept"] > 1);
               })
      // The variants change how the bandwidth-bound sizes move memory: only tiles of at least 4
      // elements a thread in vectors, where striped wins from 2^20 up (RESULTS.md).
      .require("striped variants (algo after striped) only with ept >= 4 and vec >= 2",
               [](const ConfigView& c) { return c["algo"] <= striped || (c["ept"] >= 4 && c["vec"] >= 2); })
      // Longer striped tiles keep more loads in flight per SM (ept 24: 78-82 registers, three
      // 256-thread blocks an SM; ept 32: 104, two). Only where they can pay: striped layouts, 256-
      // or 512-thread blocks, 16-byte loads (a 1024-thread block would not fit the registers).
      .require("ept above 16 only for striped layouts with 256 or 512 threads and vec 4",
               [](const ConfigView& c) {
                 return c["ept"] <= 16 ||
                        (striped_layout(c["algo"]) && (c["block"] == 256 || c["block"] == 512) && c["vec"] == 4);
               })
      .require("block <= device max threads per block",
               [max = limits.max_threads_per_block](const ConfigView& c) { return c["block"] <= max; })
      .require("shared memory <= device opt-in limit per block",
               [max = limits.max_shared_per_block_optin](const ConfigView& c) {
                 return static_shared_bytes(c["algo"], c["block"], c["pad"]) +
                            dynamic_shared_bytes(c["algo"], c["block"], c["ept"], c["pad"]) <=
                        max;
               });
  return s;
}

Problem ScanFamily::make_problem(std::int64_t n, const std::string& type, std::int64_t starts_offset,
                                 std::int64_t stops_offset) {
  if (n <= 0) throw UsageError("--n must be positive (got " + std::to_string(n) + ")");
  if (starts_offset < 0 || stops_offset < 0) throw UsageError("scan offsets must not be negative");
  element_type(type, kTypes);
  return schema().make({{"n", n}, {"type", type}, {"starts_offset", starts_offset}, {"stops_offset", stops_offset}});
}

const ProblemSchema& ScanFamily::schema() {
  static const ProblemSchema schema = ProblemSchema()
                                          .extent("n", "lists")
                                          .element_type("type", kTypes, "int32")
                                          .integer("starts_offset", 0, "elements of starts before the first list")
                                          .range(0, std::nullopt)
                                          .unkeyed_at_default()
                                          .integer("stops_offset", 0, "elements of stops before the first list")
                                          .range(0, std::nullopt)
                                          .unkeyed_at_default();
  return schema;
}

std::vector<Problem> ScanFamily::problems(const ProblemRequest& request) const {
  const std::string type = request.type.value_or("int32");
  // Every power of two from small (launch-bound) to 2^27 (bandwidth-bound, 2 GiB moved for
  // int32), plus a size that is no multiple of any tile. Every power, because the best config
  // changes from one to the next (tile against resident blocks): an application asking for 2^21
  // was answered with 2^20's config, 14 % slower than CUB there on an H100 (issue 19).
  std::vector<std::int64_t> defaults;
  for (int log_n = 10; log_n <= 27; ++log_n) defaults.push_back(std::int64_t{1} << log_n);
  defaults.insert(std::upper_bound(defaults.begin(), defaults.end(), 10'000'000), 10'000'000);
  std::vector<Problem> list;
  for (std::int64_t n : request.sizes.empty() ? defaults : request.sizes) list.push_back(make_problem(n, type));
  return list;
}

std::vector<std::string> ScanFamily::problem_definitions(const Problem& problem) const {
  return {"-DCUTUNE_T=" + element_type(problem.dtype(), kTypes).cuda_name};
}

std::vector<BufferSpec> ScanFamily::buffers(const Problem& p) const {
  const auto n = p.integer("n");
  const auto bytes = static_cast<std::int64_t>(element_type(p.dtype(), kTypes).bytes);
  return {
      {"starts", (p.integer("starts_offset") + n) * bytes, BufferRole::input},
      {"stops", (p.integer("stops_offset") + n) * bytes, BufferRole::input},
      {"tooffsets", (n + 1) * 8, BufferRole::output},
      {"error", 8, BufferRole::output},
  };
}

std::vector<BufferSpec> ScanFamily::scratch(const Problem& p, const ConfigView& c) const {
  const std::int64_t tiles = tiles_of(p, c);
  if (single_pass(c["algo"])) return {{"tile_state", (tiles + 2) * 8, BufferRole::scratch}};  // + the tile counter
  return {{"tile_sums", tiles * 8, BufferRole::scratch}};
}

std::vector<Step> ScanFamily::plan(const Problem& p, const ConfigView& c) const {
  const auto n = p.integer("n");
  const auto bytes = static_cast<std::int64_t>(element_type(p.dtype(), kTypes).bytes);
  const BufferArg starts{"starts", p.integer("starts_offset") * bytes};
  const BufferArg stops{"stops", p.integer("stops_offset") * bytes};
  const std::int64_t tiles = tiles_of(p, c);
  const Dim3 block{static_cast<unsigned>(c["block"])};
  const Dim3 grid{static_cast<unsigned>(tiles)};
  const auto shared = static_cast<unsigned>(dynamic_shared_bytes(c["algo"], c["block"], c["ept"], c["pad"]));

  std::vector<Step> steps{MemsetStep{"error", 0xffffffffu, 8}};
  if (single_pass(c["algo"])) {
    steps.push_back(MemsetStep{"tile_state", 0, (tiles + 2) * 8});
    steps.push_back(KernelLaunch{"scan_lookback",
                                 grid,
                                 block,
                                 shared,
                                 {starts, stops, n, BufferArg{"tile_state"}, BufferArg{"tile_state", tiles * 8},
                                  BufferArg{"tooffsets"}, BufferArg{"error"}}});
  } else {
    steps.push_back(
        KernelLaunch{"scan_tile_sums", grid, block, 0, {starts, stops, n, BufferArg{"tile_sums"}, BufferArg{"error"}}});
    steps.push_back(KernelLaunch{"scan_tile_offsets", Dim3{1}, block, 0, {BufferArg{"tile_sums"}, tiles}});
    steps.push_back(KernelLaunch{
        "scan_tiles", grid, block, shared, {starts, stops, n, BufferArg{"tile_sums"}, BufferArg{"tooffsets"}}});
  }
  return steps;
}

void ScanFamily::generate_inputs(const Problem& p, std::uint64_t seed, HostBuffers& inputs) const {
  dispatch_type(p.dtype(), [&](auto zero) { generate<decltype(zero)>(p, seed, inputs); });
}

HostBuffers ScanFamily::reference(const Problem& p, const HostBuffers& inputs) const {
  HostBuffers expected;
  dispatch_type(p.dtype(), [&](auto zero) { run_reference<decltype(zero)>(p, inputs, expected); });
  return expected;
}

Verdict ScanFamily::compare(const Problem&, const HostBuffers& expected, const HostBuffers& actual) const {
  const std::uint64_t want_error = expected.as<std::uint64_t>("error")[0];
  const std::uint64_t got_error = actual.as<std::uint64_t>("error")[0];
  if (want_error != got_error) {
    auto name = [](std::uint64_t e) { return e == kNoError ? std::string("none") : std::to_string(e); };
    Verdict v{false, "error index: expected " + name(want_error) + ", got " + name(got_error), std::nullopt};
    v.first_bad_index = static_cast<std::int64_t>(std::min(want_error, got_error));
    return v;
  }
  // With a bad input the offsets past it are unspecified, as in the sequential code.
  if (want_error != kNoError) return {};
  return compare_exact<std::int64_t>("tooffsets", expected.as<std::int64_t>("tooffsets"),
                                     actual.as<std::int64_t>("tooffsets"));
}

std::optional<std::vector<OutputRule>> ScanFamily::output_rules(const Problem&, const HostBuffers& expected) const {
  // With a bad input the offsets past it are unspecified, as in compare(): only the error index is checked.
  const bool offsets_specified = expected.as<std::uint64_t>("error")[0] == kNoError;
  return std::vector<OutputRule>{{"error", "uint64"}, {"tooffsets", "int64", offsets_specified}};
}

Work ScanFamily::work(const Problem& p) const {
  const auto n = static_cast<double>(p.integer("n"));
  const double element = static_cast<double>(element_type(p.dtype(), kTypes).bytes);
  return {2 * n * element + (n + 1) * 8, n};  // one subtraction and one addition per element
}

std::unique_ptr<Family> make_scan_family() { return std::make_unique<ScanFamily>(); }

}  // namespace cutune
