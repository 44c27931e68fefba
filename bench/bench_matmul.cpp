// The best stored matmul config against cublasSgemm (fp32, TF32 off) at the family's default
// sizes, in one run on one GPU. cuBLAS's result goes through the family's verification too, and
// both results' largest relative error against the exact (double) reference is printed: tf32x3
// configs compute with TF32 halves, and what that costs in accuracy belongs beside their speed.
//
//   bench_matmul [--db PATH] [--device N] [--problem KEY]...
#include <algorithm>
#include <cmath>
#include <iostream>

#include <fmt/format.h>

#include "bench_common.hpp"
#include "cublas_gemm.hpp"
#include "matmul.hpp"
#include "verify.hpp"

using namespace cutune;

namespace {

// The matmul family, whose verification also notes the largest relative error of the elements
// that the reference computed exactly (the others hold NaN there).
class ErrorNotingMatmul : public MatmulFamily {
 public:
  Verdict compare(const Problem& problem, const HostBuffers& expected, const HostBuffers& actual) const override {
    const auto want = expected.as<float>("c");
    const auto got = actual.as<float>("c");
    RelativeErrors errors;
    for (std::size_t i = 0; i < std::min(want.size(), got.size()); ++i)
      if (!std::isnan(want[i])) errors.add(i, got[i], want[i]);
    last_relative_error = errors.largest;
    return MatmulFamily::compare(problem, expected, actual);
  }
  mutable double last_relative_error = 0;
};

}  // namespace

int main(int argc, char** argv) {
  return bench::bench_main("bench_matmul", [&] {
    bench::BenchSession bench(bench::parse_bench_args(argc, argv));
    const ErrorNotingMatmul matmul;
    bench::Cublas cublas;
    bench.print_title("matmul vs cublasSgemm (fp32, no TF32)");
    std::cout << "| m x n x k | best stored config | cutune ms | cuBLAS ms | cutune TFLOP/s | cuBLAS TFLOP/s | "
                 "cutune/cuBLAS speed | cutune max rel. error | cuBLAS max rel. error |\n";
    std::cout << "|---|---|---|---|---|---|---|---|---|\n";
    for (const Problem& problem : matmul.problems({})) {
      if (!bench.wants(problem)) continue;
      const auto m = static_cast<int>(problem.integer("m")), n = static_cast<int>(problem.integer("n")),
                 k = static_cast<int>(problem.integer("k"));
      const auto ours = bench.measure_best(matmul, problem);
      if (!ours) {
        std::cout << fmt::format("| {} x {} x {} | not tuned (run tune --kernel matmul) | | | | | | | |\n", m, n, k);
        continue;
      }
      const double our_error = matmul.last_relative_error;
      const HostBuffers inputs = bench::bench_inputs(matmul, problem);
      const bench::DeviceBytes a(inputs.at("a")), b(inputs.at("b"));
      const bench::DeviceBytes c(static_cast<std::size_t>(m) * n * 4);
      const Measurement theirs = bench.time(
          [&](cudaStream_t s) { cublas.gemm(s, m, n, k, a.as<float>(), b.as<float>(), false, c.as<float>()); });
      const Verdict verdict = bench::check_baseline(matmul, problem, inputs, "c", c.get(), c.bytes());
      if (!verdict.ok) throw Error("cuBLAS fails the family's verification: " + verdict.message);

      const double flops = matmul.work(problem).flops;
      std::cout << fmt::format(
          "| {} x {} x {} | `{}` | {:.4f} | {:.4f} | {:.1f} | {:.1f} | {:.2f}x | {:.2e} | {:.2e} |\n", m, n, k,
          ours->label, ours->median_ms, theirs.median_ms, flops / ours->median_ms / 1e9, flops / theirs.median_ms / 1e9,
          theirs.median_ms / ours->median_ms, our_error, matmul.last_relative_error);
    }
  });
}
