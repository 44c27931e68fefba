#pragma once
// The copy family: the coalescing probe of the CUDA Best Practices Guide (see templates/copy.cu).
#include <cstdint>
#include <string>

#include "family.hpp"

namespace cutune {

class CopyFamily : public Family {
 public:
  std::string name() const override { return "copy"; }
  std::string summary() const override;
  std::string template_file() const override { return "copy.cu"; }
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

  // out[i] = in[offset + i * stride] for i < n, float32.
  static Problem make_problem(std::int64_t n, std::int64_t offset = 0, std::int64_t stride = 1);
  // n elements; offset and stride of the reads (left out of keys at 0 and 1); type float32.
  static const ProblemSchema& schema();
  const ProblemSchema& problem_schema() const override { return schema(); }
};

}  // namespace cutune
