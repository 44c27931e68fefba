#pragma once
// The avgmatvec family: NVIDIA's analysis-driven-optimisation example, averages of vector sets
// times a matrix (see templates/avgmatvec.cu).
#include <cstdint>
#include <span>
#include <vector>

#include "family.hpp"

namespace cutune {

class AvgmatvecFamily : public Family {
 public:
  // stream_SxP: a block averages P components of S sets and multiplies them by A's P columns;
  // the last block of a set group adds the group's partial products. pipe_SxP: the same with 4
  // chunks of P per block, each chunk's products spread over the next one's reads (see the
  // template).
  enum Fuse : std::int64_t {
    split = 0,
    fused = 1,
    stream_8x32 = 2,
    stream_8x64 = 3,
    stream_16x64 = 4,
    pipe_8x32 = 5,
    pipe_16x32 = 6
  };
  enum Reduce : std::int64_t { warp = 0, shared = 1 };
  // The fused kernel keeps one set's average (L floats) in shared memory: at most 48 KiB.
  static constexpr std::int64_t kMaxLength = 12288;

  std::string name() const override { return "avgmatvec"; }
  std::string summary() const override;
  std::string template_file() const override { return "avgmatvec.cu"; }
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

  // n sets of m vectors of length l.
  static Problem make_problem(std::int64_t n, std::int64_t m, std::int64_t l);
  // n sets of m vectors of length l (extents), type float32.
  static const ProblemSchema& schema();
  const ProblemSchema& problem_schema() const override { return schema(); }
  void check_problem(const Problem& problem) const override;
  static double relative_tolerance(std::int64_t m, std::int64_t l);

  // Sets and components (rows of v) per chunk of a stream or pipe variant, and chunks per block;
  // mirrors the template's table.
  struct StreamShape {
    std::int64_t sets, rows, chunks_per_block;
  };
  // stream or pipe: one kernel, partials per chunk, the last block of a set group adds them.
  static bool is_stream(std::int64_t fuse) { return fuse >= stream_8x32; }
  static StreamShape stream_shape(std::int64_t fuse);
};

// y (l x n) = A (l x l) times the averages of the n sets of v (laid out v[n][l][m]), in double.
void average_then_multiply(std::span<const float> v, std::span<const float> a, std::int64_t n, std::int64_t m,
                           std::int64_t l, std::span<double> y);

}  // namespace cutune
