// The best stored resample configs against CUB's DeviceSegmentedReduce over the same windows, and
// against a device-to-device copy of the bytes a resample must move (read every point, write every
// window), for the default day-long series and k = 6, 60, 3600 and 7, in one run on one GPU.
// CUB has no mean, so the operators are sum (whose code a mean shares) and max.
//
//   bench_resample [--db PATH] [--device N] [--problem KEY]...
#include <iostream>

#include <fmt/format.h>

#include "bench_common.hpp"
#include "cub_segmented.hpp"
#include "resample.hpp"

using namespace cutune;

int main(int argc, char** argv) {
  return bench::bench_main("bench_resample", [&] {
    bench::BenchSession bench(bench::parse_bench_args(argc, argv));
    const Family& resample = family_named("resample");
    bench.print_title("resample vs CUB DeviceSegmentedReduce and copy");
    std::cout << "| problem | best stored config | cutune ms | CUB ms | copy ms | cutune/CUB speed | cutune GB/s | CUB "
                 "GB/s | "
                 "cutune/copy | CUB/copy |\n";
    std::cout << "|---|---|---|---|---|---|---|---|---|---|\n";
    constexpr std::int64_t kSeries = 384, kDay = 86'400;
    for (const std::int64_t window : {6, 60, 3600, 7}) {
      for (const ReductionOp op : {ReductionOp::sum, ReductionOp::max}) {
        const Problem problem = ResampleFamily::make_problem(kSeries, kDay, window, op);
        if (!bench.wants(problem)) continue;
        const auto ours = bench.measure_best(resample, problem);
        if (!ours) {
          std::cout << fmt::format("| `{}` | not tuned (run tune --kernel resample) | | | | | | | | |\n",
                                   problem.key());
          continue;
        }
        const HostBuffers inputs = bench::bench_inputs(resample, problem);
        const bench::DeviceBytes in(inputs.at("in"));
        const bench::DeviceBytes out(static_cast<std::size_t>(kSeries * ((kDay + window - 1) / window)) * 4);
        bench::CubSegmentedReduce cub(static_cast<const float*>(in.get()), static_cast<float*>(out.get()), kSeries,
                                      kDay, window, op == ReductionOp::max ? bench::CubOp::max : bench::CubOp::sum);
        const Measurement cub_time = bench.time([&](cudaStream_t s) { CUTUNE_CUDART(cub.run(s)); });
        const Verdict cub_ok = bench::check_baseline(resample, problem, inputs, "out", out.get(), out.bytes());
        if (!cub_ok.ok) throw Error("CUB's segmented reduction disagrees with the reference: " + cub_ok.message);

        const double bytes = resample.work(problem).bytes;
        const Measurement copy = bench.time_copy_moving(bytes);
        std::cout << fmt::format(
            "| `{}` | `{}` | {:.4f} | {:.4f} | {:.4f} | {:.2f}x | {:.0f} | {:.0f} | {:.2f} | {:.2f} |\n", problem.key(),
            ours->label, ours->median_ms, cub_time.median_ms, copy.median_ms, cub_time.median_ms / ours->median_ms,
            bytes / ours->median_ms / 1e6, bytes / cub_time.median_ms / 1e6, copy.median_ms / ours->median_ms,
            copy.median_ms / cub_time.median_ms);
      }
    }
  });
}
