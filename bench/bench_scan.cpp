// The best stored scan config against CUB's DeviceScan doing the same job (int32 starts/stops →
// int64 offsets through a transform iterator) and against a device-to-device copy of the bytes
// the scan must move, for n = 2^10 … 2^27, in one run on one GPU.
//
//   bench_scan [--db PATH] [--device N] [--problem KEY]... [--min-log K] [--max-log K]
//
// --min-log/--max-log narrow the sizes to 2^min … 2^max (a profiler run at one size).
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>

#include "bench_common.hpp"
#include "cub_scan.hpp"
#include "scan.hpp"

using namespace cutune;

int main(int argc, char** argv) {
  return bench::bench_main("bench_scan", [&] {
    const bench::BenchArgs args = bench::parse_bench_args(argc, argv, {"--min-log", "--max-log"});
    const int min_log = args.integer("--min-log", 10), max_log = args.integer("--max-log", 27);
    bench::BenchSession bench(args);
    const Family& scan = family_named("scan");
    bench.print_title("scan vs CUB DeviceScan and copy");
    std::cout
        << "| n | best stored config | cutune ms | CUB ms | copy ms | cutune/CUB speed | cutune GB/s | CUB GB/s | "
           "cutune/copy | CUB/copy |\n";
    std::cout << "|---|---|---|---|---|---|---|---|---|---|\n";
    for (int log_n = min_log; log_n <= max_log; ++log_n) {
      const std::int64_t n = std::int64_t{1} << log_n;
      const Problem problem = ScanFamily::make_problem(n, "int32");
      if (!bench.wants(problem)) continue;
      const auto ours = bench.measure_best(scan, problem);
      if (!ours) {
        std::cout << fmt::format("| 2^{} | not tuned (run tune --kernel scan) | | | | | | | | |\n", log_n);
        continue;
      }

      // CUB on the same data; its answer must match the reference too, or the comparison means nothing.
      const HostBuffers inputs = bench::bench_inputs(scan, problem);
      const bench::DeviceBytes starts(inputs.at("starts")), stops(inputs.at("stops"));
      const bench::DeviceBytes out(static_cast<std::size_t>(n + 1) * 8);
      bench::CubScan cub(starts.as<int>(), stops.as<int>(), out.as<long long>(), n);
      const Measurement cub_time = bench.time([&](cudaStream_t s) { CUTUNE_CUDART(cub.run(s)); });
      const Verdict cub_ok = bench::check_baseline(scan, problem, inputs, "tooffsets", out.get(), out.bytes());
      if (!cub_ok.ok) throw Error("CUB's scan disagrees with the reference: " + cub_ok.message);

      bench.store().add_baseline({bench.store().upsert_device(bench.device().fingerprint()), "scan", problem.key(),
                                  "cub::DeviceScan::InclusiveSum", cub_time.median_ms, ours->median_ms, ours->config,
                                  "", bench::bench_git_commit()});
      const double bytes = scan.work(problem).bytes;
      const Measurement copy = bench.time_copy_moving(bytes);
      std::cout << fmt::format(
          "| 2^{} | `{}` | {:.4f} | {:.4f} | {:.4f} | {:.2f}x | {:.0f} | {:.0f} | {:.2f} | {:.2f} |\n", log_n,
          ours->label, ours->median_ms, cub_time.median_ms, copy.median_ms, cub_time.median_ms / ours->median_ms,
          bytes / ours->median_ms / 1e6, bytes / cub_time.median_ms / 1e6, copy.median_ms / ours->median_ms,
          copy.median_ms / cub_time.median_ms);
    }
  });
}
