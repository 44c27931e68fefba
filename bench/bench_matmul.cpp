// The best stored matmul config against cublasSgemm (fp32, TF32 off) at the family's default
// sizes, in one run on one GPU. cuBLAS's result goes through the family's verification too.
//
//   bench_matmul [--db PATH] [--device N] [--problem KEY]...
#include <iostream>

#include <fmt/format.h>

#include "bench_common.hpp"
#include "cublas_gemm.hpp"
#include "matmul.hpp"

using namespace cutune;

int main(int argc, char** argv) {
  return bench::bench_main("bench_matmul", [&] {
    bench::BenchSession bench(bench::parse_bench_args(argc, argv));
    const Family& matmul = family_named("matmul");
    bench::Cublas cublas;
    bench.print_title("matmul vs cublasSgemm (fp32, no TF32)");
    std::cout << "| m x n x k | best stored config | cutune ms | cuBLAS ms | cutune TFLOP/s | cuBLAS TFLOP/s | "
                 "cutune/cuBLAS speed |\n";
    std::cout << "|---|---|---|---|---|---|---|\n";
    for (const Problem& problem : matmul.problems({})) {
      if (!bench.wants(problem)) continue;
      const auto m = static_cast<int>(problem.integer("m")), n = static_cast<int>(problem.integer("n")),
                 k = static_cast<int>(problem.integer("k"));
      const auto ours = bench.measure_best(matmul, problem);
      if (!ours) {
        std::cout << fmt::format("| {} x {} x {} | not tuned (run tune --kernel matmul) | | | | | |\n", m, n, k);
        continue;
      }
      const HostBuffers inputs = bench::bench_inputs(matmul, problem);
      const bench::DeviceBytes a(inputs.at("a")), b(inputs.at("b"));
      const bench::DeviceBytes c(static_cast<std::size_t>(m) * n * 4);
      const Measurement theirs = bench.time(
          [&](cudaStream_t s) { cublas.gemm(s, m, n, k, a.as<float>(), b.as<float>(), false, c.as<float>()); });
      const Verdict verdict = bench::check_baseline(matmul, problem, inputs, "c", c.get(), c.bytes());
      if (!verdict.ok) throw Error("cuBLAS fails the family's verification: " + verdict.message);

      const double flops = matmul.work(problem).flops;
      std::cout << fmt::format("| {} x {} x {} | `{}` | {:.4f} | {:.4f} | {:.1f} | {:.1f} | {:.2f}x |\n", m, n, k,
                               ours->label, ours->median_ms, theirs.median_ms, flops / ours->median_ms / 1e9,
                               flops / theirs.median_ms / 1e9, theirs.median_ms / ours->median_ms);
    }
  });
}
