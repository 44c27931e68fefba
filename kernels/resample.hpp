#pragma once
// The resample family: Gnocchi-style aggregation of time series into fixed windows (see
// templates/resample.cu).
#include <cstdint>
#include <string>

#include "family.hpp"
#include "reduction_op.hpp"

namespace cutune {

class ResampleFamily : public Family {
 public:
  enum Map : std::int64_t { thread = 0, warp = 1, block = 2 };
  // A block stages its points in shared memory only up to this size, which every device since
  // sm_50 gives without opting in; larger runs are read directly (the launch records 0 bytes).
  static constexpr std::int64_t kStageCapBytes = 48 * 1024;

  std::string name() const override { return "resample"; }
  std::string summary() const override;
  std::string template_file() const override { return "resample.cu"; }
  Space space(const DeviceLimits& limits) const override;
  std::vector<Problem> problems(const ProblemRequest& request) const override;
  std::vector<std::string> problem_definitions(const Problem& problem) const override;
  std::vector<BufferSpec> buffers(const Problem& problem) const override;
  std::vector<Step> plan(const Problem& problem, const ConfigView& config) const override;
  void generate_inputs(const Problem& problem, std::uint64_t seed, HostBuffers& inputs) const override;
  HostBuffers reference(const Problem& problem, const HostBuffers& inputs) const override;
  Verdict compare(const Problem& problem, const HostBuffers& expected, const HostBuffers& actual) const override;
  std::optional<std::vector<OutputRule>> output_rules(const Problem& problem,
                                                      const HostBuffers& expected) const override;
  Work work(const Problem& problem) const override;

  // `series` series of `points` float32 points, windows of `window` points, one op per window.
  static Problem make_problem(std::int64_t series, std::int64_t points, std::int64_t window, ReductionOp op);
  // series x points (extents), window, op, type float32.
  static const ProblemSchema& schema();
  const ProblemSchema& problem_schema() const override { return schema(); }
  void check_problem(const Problem& problem) const override;
  static ReductionOp op_of(const Problem& problem);
  // Bytes of shared memory a block of a thread-mapped, staged config asks for on this window size.
  static std::int64_t stage_bytes(std::int64_t block, std::int64_t wpt, std::int64_t window, std::int64_t vec,
                                  std::int64_t pad);
};

}  // namespace cutune
