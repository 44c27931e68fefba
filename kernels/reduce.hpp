#pragma once
// The reduce family: sum, minimum or maximum of an array (see templates/reduce.cu).
#include <cstdint>
#include <string>

#include "family.hpp"
#include "reduction_op.hpp"

namespace cutune {

class ReduceFamily : public Family {
 public:
  enum Finish : std::int64_t { smem = 0, shuffle = 1 };
  enum Pass : std::int64_t { atomic = 0, lastblock = 1, twopass = 2 };
  enum Preset : std::int64_t { memset = 0, stream = 1 };

  std::string name() const override { return "reduce"; }
  std::string summary() const override;
  std::string template_file() const override { return "reduce.cu"; }
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

  // float32 takes sum, min and max; float64 takes sum. Throws UsageError otherwise.
  static Problem make_problem(std::int64_t n, ReductionOp op, const std::string& type);
  // n elements, op, type.
  static const ProblemSchema& schema();
  const ProblemSchema& problem_schema() const override { return schema(); }
  void check_problem(const Problem& problem) const override;
  static ReductionOp op_of(const Problem& problem);
  // Shared memory of one block, as the template lays it out.
  static std::int64_t shared_bytes(std::int64_t finish, std::int64_t block, std::int64_t pad,
                                   std::int64_t element_bytes);
};

}  // namespace cutune
