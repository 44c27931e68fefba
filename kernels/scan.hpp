#pragma once
// The scan family: awkward-array's compact_offsets (see templates/scan.cu).
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "family.hpp"
#include "parallel.hpp"

namespace cutune {

class ScanFamily : public Family {
 public:
  // lookback and striped run one kernel, scan_lookback, with decoupled look-back; striped lays
  // tiles out warp-striped and stages nothing in shared memory (templates/scan.cu). The algos after
  // striped are striped with other memory instructions: streaming loads, non-allocating loads with
  // 256-byte L2 fetches, or an L2 prefetch of the tile one wave ahead with streaming loads and
  // stores (issue 19). Configs are stored by label, so these numbers may change when labels go.
  enum Algorithm : std::int64_t {
    blelloch = 0,
    warp = 1,
    lookback = 2,
    striped = 3,
    striped_ld_cs = 4,
    striped_ld_nc = 5,
    striped_pf_cs = 6
  };
  static bool single_pass(std::int64_t algo) { return algo >= lookback; }
  // striped or one of its variants: the warp-striped layout, nothing staged in shared memory.
  static bool striped_layout(std::int64_t algo) { return algo >= striped; }

  std::string name() const override { return "scan"; }
  std::string summary() const override;
  std::string template_file() const override { return "scan.cu"; }
  Space space(const DeviceLimits& limits) const override;
  std::vector<Problem> problems(const ProblemRequest& request) const override;
  std::vector<std::string> problem_definitions(const Problem& problem) const override;
  std::vector<BufferSpec> buffers(const Problem& problem) const override;
  std::vector<BufferSpec> scratch(const Problem& problem, const ConfigView& config) const override;
  std::vector<Step> plan(const Problem& problem, const ConfigView& config) const override;
  void generate_inputs(const Problem& problem, std::uint64_t seed, HostBuffers& inputs) const override;
  HostBuffers reference(const Problem& problem, const HostBuffers& inputs) const override;
  Verdict compare(const Problem& problem, const HostBuffers& expected, const HostBuffers& actual) const override;
  std::optional<std::vector<OutputRule>> output_rules(const Problem& problem,
                                                      const HostBuffers& expected) const override;
  Work work(const Problem& problem) const override;

  // A problem with explicit offsets into starts/stops (the tuning defaults use 0).
  static Problem make_problem(std::int64_t n, const std::string& type, std::int64_t starts_offset = 0,
                              std::int64_t stops_offset = 0);
  // n lists, type; where the lists start in starts and stops (left out of keys at 0).
  static const ProblemSchema& schema();
  const ProblemSchema& problem_schema() const override { return schema(); }

  // Bytes of shared memory one block needs (static + dynamic), as the template lays it out.
  static std::int64_t static_shared_bytes(std::int64_t algo, std::int64_t block, std::int64_t pad);
  static std::int64_t dynamic_shared_bytes(std::int64_t algo, std::int64_t block, std::int64_t ept, std::int64_t pad);
};

// compact_offsets: fills tooffsets (n+1 values) and returns the lowest i with stops[i] < starts[i],
// if any (tooffsets is then filled only up to i), as the sequential loop does. In chunks on every
// core: each chunk's total and first bad index, then each chunk's offsets from the totals before it;
// the reference of a 2^27-element scan takes a fraction of a second instead of seconds.
template <class T>
std::optional<std::int64_t> compact_offsets(std::span<const T> starts, std::span<const T> stops,
                                            std::span<std::int64_t> tooffsets) {
  const std::size_t n = tooffsets.size() - 1;
  const auto length = [&](std::size_t i) {
    return static_cast<std::int64_t>(stops[i]) - static_cast<std::int64_t>(starts[i]);
  };
  const std::size_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<std::int64_t> totals(chunks, 0), bad(chunks, -1);
  for_each_chunk(n, kChunk, [&](std::size_t c, std::size_t first, std::size_t count) {
    std::int64_t total = 0;
    for (std::size_t i = first; i < first + count; ++i) {
      if (stops[i] < starts[i]) {
        bad[c] = static_cast<std::int64_t>(i);
        return;
      }
      total += length(i);
    }
    totals[c] = total;
  });
  std::optional<std::int64_t> first_bad;
  std::vector<std::int64_t> base;  // each chunk's offset before its first element, up to the first bad chunk
  std::int64_t running = 0;
  for (std::size_t c = 0; c < chunks && !first_bad; ++c) {
    base.push_back(running);
    running += totals[c];
    if (bad[c] >= 0) first_bad = bad[c];
  }
  tooffsets[0] = 0;
  for_each_chunk(std::min(n, base.size() * kChunk), kChunk, [&](std::size_t c, std::size_t first, std::size_t count) {
    std::int64_t offset = base[c];
    for (std::size_t i = first; i < first + count && !(stops[i] < starts[i]); ++i)
      tooffsets[i + 1] = offset += length(i);
  });
  return first_bad;
}

}  // namespace cutune
