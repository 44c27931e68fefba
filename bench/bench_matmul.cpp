// The best stored matmul config against cublasSgemm (fp32, TF32 off) at the family's default
// sizes, in one run on one GPU. cuBLAS's result goes through the family's verification too.
//
//   bench_matmul [--db PATH] [--device N]
#include <iostream>

#include <fmt/format.h>

#include "bench_common.hpp"
#include "cublas_gemm.hpp"
#include "matmul.hpp"

using namespace cutune;

int main(int argc, char** argv) {
  try {
    bench::BenchSession session(bench::parse_bench_args(argc, argv));
    const MatmulFamily matmul;
    bench::Cublas cublas;
    std::cout << session.heading("matmul vs cublasSgemm (fp32, no TF32)");
    std::cout << "| m x n x k | best stored config | cutune ms | cuBLAS ms | cutune TFLOP/s | cuBLAS TFLOP/s | cutune/cuBLAS speed |\n";
    std::cout << "|---|---|---|---|---|---|---|\n";
    for (const Problem& problem : matmul.problems({})) {
      const auto m = problem.fields["m"].get<int>(), n = problem.fields["n"].get<int>(), k = problem.fields["k"].get<int>();
      const bench::StoredRun ours = bench::run_best_stored(session, matmul, problem);

      const HostBuffers inputs = bench::bench_inputs(matmul, problem);
      const bench::DeviceBytes a(inputs.at("a")), b(inputs.at("b"));
      const bench::DeviceBytes c(static_cast<std::size_t>(m) * n * 4);
      auto sgemm = [&](cudaStream_t s) { cublas.gemm(s, m, n, k, a.as<float>(), b.as<float>(), false, c.as<float>()); };
      const Measurement theirs = bench::time_baseline(sgemm, session.stream, session.options, session.l2_bytes);
      HostBuffers cublas_out;
      cublas_out.at("c") = c.download();
      const Verdict verdict = matmul.compare(problem, matmul.reference(problem, inputs), cublas_out);
      if (!verdict.ok) throw Error("cuBLAS fails the family's verification: " + verdict.message);

      const double flops = matmul.work(problem).flops;
      const double ours_ms = ours.measurement.median_ms;
      std::cout << fmt::format("| {} x {} x {} | `{}` | {:.4f} | {:.4f} | {:.1f} | {:.1f} | {:.2f}x |\n", m, n, k, ours.label,
                               ours_ms, theirs.median_ms, flops / ours_ms / 1e9, flops / theirs.median_ms / 1e9,
                               theirs.median_ms / ours_ms);
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "bench_matmul: " << e.what() << "\n";
    return 1;
  }
}
