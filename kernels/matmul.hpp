#pragma once
// The matmul family: fp32 C = A B, the CUDA best-practices guide's tiled kernels, a
// register-tiled, double-buffered one and a warp-tiled one fed by a multi-stage cp.async pipeline
// (see templates/matmul.cu).
#include <cstdint>
#include <span>
#include <vector>

#include "family.hpp"

namespace cutune {

class MatmulFamily : public Family {
 public:
  // tf32x3: warptile's kernel with its products on the tensor cores, three TF32 products each.
  enum Algorithm : std::int64_t { a_shared = 0, ab_shared = 1, regtile = 2, warptile = 3, tf32x3 = 4 };
  // warptile and tf32x3 share the block tiles, warps, pipeline and their axes.
  static bool warp_tiled(std::int64_t algo) { return algo >= warptile; }
  // warptile's block tile: tile x tile, tile x 2 tile (wide) or 2 tile x tile (tall).
  enum Shape : std::int64_t { square = 0, wide = 1, tall = 2 };
  static constexpr std::int64_t kMaxDimension = 32768;
  // Stream-K launches at most this many blocks (as many as the device holds at once, up to it):
  // it bounds the workspace, two 64 KiB parts a block. 2 x 132 SMs on an H100.
  static constexpr std::int64_t kMaxStreamKBlocks = 1024;

  std::string name() const override { return "matmul"; }
  std::string summary() const override;
  std::string template_file() const override { return "matmul.cu"; }
  std::vector<std::string> template_headers() const override { return {"cp_async.cuh", "tf32x3.cuh"}; }
  Space space(const DeviceLimits& limits) const override;
  std::vector<Problem> problems(const ProblemRequest& request) const override;
  std::vector<std::string> problem_definitions(const Problem& problem) const override;
  std::vector<BufferSpec> buffers(const Problem& problem) const override;
  std::vector<Step> plan(const Problem& problem, const ConfigView& config) const override;
  std::vector<BufferSpec> scratch(const Problem& problem, const ConfigView& config) const override;
  void generate_inputs(const Problem& problem, std::uint64_t seed, HostBuffers& inputs) const override;
  HostBuffers reference(const Problem& problem, const HostBuffers& inputs) const override;
  Verdict compare(const Problem& problem, const HostBuffers& expected, const HostBuffers& actual) const override;
  Work work(const Problem& problem) const override;

  static Problem make_problem(std::int64_t m, std::int64_t n, std::int64_t k);
  // m x k times k x n (extents: the size is m * n * k multiply-adds), type float32.
  static const ProblemSchema& schema();
  const ProblemSchema& problem_schema() const override { return schema(); }

  static std::int64_t threads(std::int64_t tile, std::int64_t ept) { return (tile / ept) * (tile / ept); }
  // Block tile rows and columns (every algo but warptile takes the square shape).
  static std::int64_t tile_rows(std::int64_t tile, std::int64_t shape) { return shape == tall ? 2 * tile : tile; }
  static std::int64_t tile_columns(std::int64_t tile, std::int64_t shape) { return shape == wide ? 2 * tile : tile; }
  static std::int64_t threads(std::int64_t tile, std::int64_t ept, std::int64_t shape) {
    return (tile_rows(tile, shape) / ept) * (tile_columns(tile, shape) / ept);
  }
  // Floats of one tile that each thread fetches (the widest useful vector load).
  static std::int64_t fetch_share(std::int64_t algo, std::int64_t tile, std::int64_t ept, std::int64_t bk);
  static std::int64_t static_shared_bytes(std::int64_t algo, std::int64_t tile, std::int64_t pad, std::int64_t bk);
  // warptile's pipeline (dynamic shared memory; 0 for the other algos): `stages` buffers of A's
  // rows x bk tile (transposed or not, padded by 4 floats a row with pad) and B's bk x columns tile.
  static std::int64_t dynamic_shared_bytes(const ConfigView& config);
  // Blocks that a stream-K config's launch asks for (the device may hold fewer at once).
  static std::int64_t stream_k_blocks(const Problem& problem, const ConfigView& config);

  // Which elements of C the reference computes exactly (the others are only checked for being
  // plausible): every one for small problems, else whole sampled rows and columns.
  struct Sample {
    std::vector<std::int64_t> rows, columns;
  };
  static Sample reference_sample(std::int64_t m, std::int64_t n, std::int64_t k);
};

// Rows `rows` of C = A B (m x k times k x n, row-major), in double: out[r][j] for rows[r].
void matmul_rows(std::span<const float> a, std::span<const float> b, std::int64_t n, std::int64_t k,
                 std::span<const std::int64_t> rows, std::span<double> out);
// Column j of C = A B in double (m values).
void matmul_column(std::span<const float> a, std::span<const float> b, std::int64_t m, std::int64_t n, std::int64_t k,
                   std::int64_t j, std::span<double> out);

}  // namespace cutune
