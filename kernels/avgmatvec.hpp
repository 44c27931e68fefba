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
  // split64x32, split64k2, split64k4: split with other tiles of the product (see matvec_shape);
  // they ask L2 for their slabs of A and avg first. splitcp, split64k2cp, split64k4cp: the tiles of
  // split, split64k2 and split64k4 fed by a cp.async pipeline (sm_80 and newer). splittc,
  // split64k2tc, split64k4tc: the cp forms with their products on the tensor cores (3xTF32).
  // (Stream and pipe variants held values 2 to 6 until they were removed, having lost to split
  // at every size measured; splitpf, split's tiles with the prefetch, held 5 and was removed, never
  // faster than split or split64k2/k4. Configs are stored by label, so theirs no longer parse.)
  enum Fuse : std::int64_t {
    split = 0,
    fused = 1,
    split_64x32 = 2,
    split_64k2 = 3,
    split_64k4 = 4,
    split_cp = 5,
    split_64k2_cp = 6,
    split_64k4_cp = 7,
    split_tc = 8,
    split_64k2_tc = 9,
    split_64k4_tc = 10
  };
  enum Reduce : std::int64_t { warp = 0, shared = 1 };
  // The cp forms' product by programmatic dependent launch: off, or allowed to launch once every
  // averaging block has read its rows. (Allowing it once every averaging block had begun was
  // level at best and 18 % slower for splitcp at 512 on an H200: not kept.)
  enum Pdl : std::int64_t { pdl_off = 0, pdl_end = 1 };
  // The fused kernel keeps one set's average (L floats) in shared memory: at most 48 KiB.
  static constexpr std::int64_t kMaxLength = 12288;

  std::string name() const override { return "avgmatvec"; }
  std::string summary() const override;
  std::string template_file() const override { return "avgmatvec.cu"; }
  std::vector<std::string> template_headers() const override { return {"cp_async.cuh", "tf32x3.cuh"}; }
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

  // The split form's product: tiles of `rows` rows of y x `sets` sets, their depth split in
  // `parts` blocks, fed through registers or by cp.async; mirrors the template's table.
  struct MatvecShape {
    std::int64_t rows, sets, parts;
    bool async = false;
    bool tensor = false;                                       // the tc forms: products on the tensor cores (async too)
    std::int64_t threads() const { return rows * sets / 16; }  // 4 x 4 results a thread
    // The cp.async pipeline's buffers (dynamic shared memory): 4 stages of the tile's rows of A
    // and of avg, 32 floats deep plus 4 of padding (8 for the tc forms' paired reads); none for the
    // other kernel.
    std::int64_t dynamic_shared_bytes() const { return async ? 4 * (rows + sets) * (32 + (tensor ? 8 : 4)) * 4 : 0; }
  };
  static MatvecShape matvec_shape(std::int64_t fuse);  // for split variants only
  static bool matvec_async(std::int64_t fuse);         // the cp forms; false for fused too
};

// y (l x n) = A (l x l) times the averages of the n sets of v (laid out v[n][l][m]), in double.
void average_then_multiply(std::span<const float> v, std::span<const float> a, std::int64_t n, std::int64_t m,
                           std::int64_t l, std::span<double> y);

}  // namespace cutune
