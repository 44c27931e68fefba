// The best stored avgmatvec config against its byte floor (the bytes it must move at the
// device-to-device copy bandwidth measured in the same run) and against a library pipeline:
// a warp-per-row average, then cublasSgemm (fp32, TF32 off) for the products.
//
//   bench_avgmatvec [--db PATH] [--device N] [--problem KEY]...
#include <iostream>

#include <fmt/format.h>

#include "avgmatvec.hpp"
#include "bench_common.hpp"
#include "cublas_gemm.hpp"
#include "warp_average.hpp"

using namespace cutune;

int main(int argc, char** argv) {
  return bench::bench_main("bench_avgmatvec", [&] {
    bench::BenchSession bench(bench::parse_bench_args(argc, argv));
    const Family& family = family_named("avgmatvec");
    bench::Cublas cublas;
    bench.print_title("avgmatvec vs byte floor and warp average + cublasSgemm");
    std::cout
        << "| N = M = L | best stored config | cutune ms | floor ms | cutune/floor | pipeline ms | pipeline/floor | "
           "cutune/pipeline speed |\n";
    std::cout << "|---|---|---|---|---|---|---|---|\n";
    for (const Problem& problem : family.problems({})) {
      if (!bench.wants(problem)) continue;
      const auto n = static_cast<int>(problem.integer("n")), m = static_cast<int>(problem.integer("m")),
                 l = static_cast<int>(problem.integer("l"));
      const auto ours = bench.measure_best(family, problem);
      if (!ours) {
        std::cout << fmt::format("| {} | not tuned (run tune --kernel avgmatvec) | | | | | | |\n", n);
        continue;
      }
      // The floor: moving the run's bytes (read v and A, write y) at copy speed.
      const double bytes = family.work(problem).bytes;
      const Measurement floor = bench.time_copy_moving(bytes);

      const HostBuffers inputs = bench::bench_inputs(family, problem);
      const bench::DeviceBytes v(inputs.at("v")), a(inputs.at("a"));
      const bench::DeviceBytes avg(static_cast<std::size_t>(n) * l * 4), y(static_cast<std::size_t>(l) * n * 4);
      auto pipeline = [&](cudaStream_t s) {
        CUTUNE_CUDART(bench::warp_average(v.as<float>(), static_cast<long long>(n) * l, m, avg.as<float>(), s));
        cublas.gemm(s, l, n, l, a.as<float>(), avg.as<float>(), true, y.as<float>());  // y = A avg^T
      };
      const Measurement theirs = bench.time(pipeline);
      const Verdict verdict = bench::check_baseline(family, problem, inputs, "y", y.get(), y.bytes());
      if (!verdict.ok) throw Error("the library pipeline fails the family's verification: " + verdict.message);

      std::cout << fmt::format("| {} | `{}` | {:.4f} | {:.4f} | {:.2f} | {:.4f} | {:.2f} | {:.2f}x |\n", n, ours->label,
                               ours->median_ms, floor.median_ms, floor.median_ms / ours->median_ms, theirs.median_ms,
                               floor.median_ms / theirs.median_ms, theirs.median_ms / ours->median_ms);
    }
  });
}
