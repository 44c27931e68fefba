#pragma once
// The powersum family: the sums of the power-law MLE study (see templates/powersum.cu).
#include <cstdint>
#include <span>
#include <vector>

#include "family.hpp"

namespace cutune {

class PowersumFamily : public Family {
 public:
  enum Map : std::int64_t { pair = 0, exponent = 1, tile = 2, sym = 3, line = 4, diag = 5, diag2 = 6 };
  static constexpr std::int64_t kSymTile = 32;  // the sym and diag maps' tiles of pairs (see the template)
  // The diag maps: diag and diag2 (the map values from diag on).
  static constexpr bool is_diag(std::int64_t map) { return map >= diag; }
  // Rows per lane of the diag maps (DIAG_ROWS in the template): their tiles are 32 of them by 32 columns.
  static constexpr std::int64_t diag_rows(std::int64_t map) { return map == diag2 ? 2 : 1; }
  // Tiles of a diag map that reach above the diagonal of a window of w points.
  static std::int64_t diag_tiles(std::int64_t map, std::int64_t w);
  enum Term : std::int64_t { pow_term = 0, explog_term = 1, ladder_term = 2, tabexp_term = 3, tabexp32_term = 4 };
  // The table terms: tabexp (16 entries) and tabexp32 (32 entries, one FP64 operation fewer a term).
  static constexpr bool is_table(std::int64_t term) { return term == tabexp_term || term == tabexp32_term; }

  // Windows are staged whole in shared memory (the study's windows are a few hundred to a few
  // thousand points): at most 48 KiB, so no opt-in is needed on any supported GPU.
  static constexpr std::int64_t kMaxWindow = 6144;
  static constexpr std::int64_t kDefaultExponents = 80;

  std::string name() const override { return "powersum"; }
  std::string summary() const override;
  std::string template_file() const override { return "powersum.cu"; }
  std::vector<std::string> template_headers() const override { return {"straight_math.cuh"}; }
  Space space(const DeviceLimits& limits) const override;
  std::vector<Problem> problems(const ProblemRequest& request) const override;
  std::vector<std::string> problem_definitions(const Problem& problem) const override;
  std::vector<BufferSpec> buffers(const Problem& problem) const override;
  std::vector<Step> plan(const Problem& problem, const ConfigView& config) const override;
  void generate_inputs(const Problem& problem, std::uint64_t seed, HostBuffers& inputs) const override;
  HostBuffers reference(const Problem& problem, const HostBuffers& inputs) const override;
  Verdict compare(const Problem& problem, const HostBuffers& expected, const HostBuffers& actual) const override;
  Work work(const Problem& problem) const override;

  // How the exponents are spread over [1.5, 3.5]: an evenly spaced candidate grid, as an MLE scan
  // uses (Clauset et al.'s plfit scans 1.5:0.01:3.5), or sorted uniform draws.
  enum class Alphas { grid, random };
  static Problem make_problem(std::int64_t window, std::int64_t exponents = kDefaultExponents,
                              Alphas alphas = Alphas::grid);
  // w points and a exponents (extents: the size is w * a), alphas, type float64.
  static const ProblemSchema& schema();
  const ProblemSchema& problem_schema() const override { return schema(); }

  // Shared memory one block needs as the template lays it out: the two trees of the tree maps, the tile
  // and line maps' transpose or the sym map's tiles (static), and the staged window or the line map's
  // per-k ladder starts of one chunk (dynamic).
  static std::int64_t static_shared_bytes(std::int64_t map, std::int64_t block, std::int64_t jt);
  // Accumulators per round of the tile and line maps' transpose (combine_columns() in the template).
  static std::int64_t combine_columns(std::int64_t block, std::int64_t jt);
  static std::int64_t dynamic_shared_bytes(std::int64_t map, std::int64_t block, std::int64_t stage,
                                           std::int64_t window);
  // Distances per chunk of the line map (LINE_CHUNK in the template).
  static constexpr std::int64_t kLineChunk = 512;
  // |minus - expected| <= rtol |expected| + atol, from the error analysis in powersum.cpp.
  struct Tolerance {
    double rtol, atol;
  };
  static Tolerance tolerance(std::int64_t window);
  static constexpr std::int64_t kMaxExponentsPerGroup = 80;  // the largest jt; the ladder's error grows with it
};

// The sums on the CPU: pow in double, sums in long double. `minus` and `plus` hold
// alpha.size() rows of x.size() values (row j, column i).
void power_sums(std::span<const double> x, std::span<const double> alpha, std::span<double> minus,
                std::span<double> plus);

}  // namespace cutune
