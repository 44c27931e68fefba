// The best stored powersum config against the study's layout — one 512-thread block per
// (i, j) — at the family's default sizes, in one run on one GPU. The study's layout is given its
// best fold stop and staging (every such config is measured), so the speedup is not flattered.
//
//   bench_powersum [--db PATH] [--device N] [--problem KEY]...
#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "bench_common.hpp"
#include "powersum.hpp"

using namespace cutune;

int main(int argc, char** argv) {
  return bench::bench_main("bench_powersum", [&] {
    bench::BenchSession bench(bench::parse_bench_args(argc, argv));
    const Family& family = family_named("powersum");
    bench.print_title("powersum vs the study's layout (512-thread block per (i, j))");
    std::cout << "| w, A, exponents | best stored config | cutune ms | study layout (best fold, staging) | study ms | "
                 "speedup |\n";
    std::cout << "|---|---|---|---|---|---|\n";
    for (const Problem& problem : family.problems({})) {
      if (!bench.wants(problem)) continue;
      const std::string what =
          fmt::format("{}, {}, {}", problem.integer("w"), problem.integer("a"), problem.text("alphas"));
      const auto ours = bench.measure_best(family, problem);
      if (!ours) {
        std::cout << fmt::format("| {} | not tuned (run tune --kernel powersum) | | | | |\n", what);
        continue;
      }
      std::optional<double> study_ms;
      std::string study_config;
      for (const char* fold : {"1", "8", "32"})
        for (const char* stage : {"global", "shared"}) {
          const std::string key =
              fmt::format("map=pair,block=512,fold={},stage={},ksplit=1,jt=1,term=pow", fold, stage);
          const Outcome study = bench.run_config(family, problem, key);
          if (study.status != Status::ok) throw Error(key + " failed in the bench: " + study.error);
          if (!study_ms || study.measurement->median_ms < *study_ms) {
            study_ms = study.measurement->median_ms;
            study_config = key;
          }
        }
      std::cout << fmt::format("| {} | `{}` | {:.4f} | `{}` | {:.4f} | {:.1f}x |\n", what, ours->label, ours->median_ms,
                               study_config, *study_ms, *study_ms / ours->median_ms);
    }
  });
}
