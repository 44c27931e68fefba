// The copy family's best stored configs (the coalescing probes) against cudaMemcpyAsync of the same
// bytes, in one run on one GPU. The aligned probe is the kernel copy ceiling that reports compare
// other kernels with; the session's device record holds cuMemcpy's.
//
//   bench_copy [--db PATH] [--device N] [--problem KEY]...
#include <iostream>

#include <fmt/format.h>

#include "bench_common.hpp"
#include "copy.hpp"

using namespace cutune;

int main(int argc, char** argv) {
  return bench::bench_main("bench_copy", [&] {
    bench::BenchSession bench(bench::parse_bench_args(argc, argv));
    const Family& copy = family_named("copy");
    bench.print_title("copy probes vs cudaMemcpy");
    std::cout
        << "| problem | best stored config | cutune ms | memcpy ms | cutune GB/s | memcpy GB/s | cutune/memcpy |\n";
    std::cout << "|---|---|---|---|---|---|---|\n";
    for (const Problem& problem : copy.problems({})) {
      if (!bench.wants(problem)) continue;
      const auto ours = bench.measure_best(copy, problem);
      if (!ours) {
        std::cout << fmt::format("| `{}` | not tuned (run tune --kernel copy) | | | | | |\n", problem.key());
        continue;
      }
      const double bytes = copy.work(problem).bytes;
      const Measurement memcpy = bench.time_copy_moving(bytes);
      std::cout << fmt::format("| `{}` | `{}` | {:.4f} | {:.4f} | {:.0f} | {:.0f} | {:.2f} |\n", problem.key(),
                               ours->label, ours->median_ms, memcpy.median_ms, bytes / ours->median_ms / 1e6,
                               bytes / memcpy.median_ms / 1e6, memcpy.median_ms / ours->median_ms);
    }
  });
}
