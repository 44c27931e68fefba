// The best stored reduce configs against CUB's DeviceReduce doing the same reduction, and against a
// device-to-device copy of the bytes the reduction reads, at n = 2^20, 2^24 and 2^27, in one run on
// one GPU. Every CUB answer is checked against the reference like a tuned config's.
//
//   bench_reduce [--db PATH] [--device N] [--problem KEY]...
#include <iostream>

#include <fmt/format.h>

#include "bench_common.hpp"
#include "cub_reduce.hpp"
#include "reduce.hpp"

using namespace cutune;

namespace {

bench::CubOp cub_op(ReductionOp op) {
  return op == ReductionOp::min ? bench::CubOp::min : op == ReductionOp::max ? bench::CubOp::max : bench::CubOp::sum;
}

}  // namespace

int main(int argc, char** argv) {
  return bench::bench_main("bench_reduce", [&] {
    bench::BenchSession bench(bench::parse_bench_args(argc, argv));
    const Family& reduce = family_named("reduce");
    bench.print_title("reduce vs CUB DeviceReduce and copy");
    std::cout
        << "| n | op | type | best stored config | cutune ms | CUB ms | copy ms | cutune/CUB speed | cutune GB/s | "
           "CUB GB/s | cutune/copy | CUB/copy |\n";
    std::cout << "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    const std::vector<std::pair<ReductionOp, std::string>> cases{{ReductionOp::sum, "float32"},
                                                                 {ReductionOp::min, "float32"},
                                                                 {ReductionOp::max, "float32"},
                                                                 {ReductionOp::sum, "float64"}};
    for (const int log_n : {20, 24, 27}) {
      for (const auto& [op, type] : cases) {
        const Problem problem = ReduceFamily::make_problem(std::int64_t{1} << log_n, op, type);
        if (!bench.wants(problem)) continue;
        const auto ours = bench.measure_best(reduce, problem);
        if (!ours) {
          std::cout << fmt::format(
              "| 2^{} | {} | {} | not tuned (run tune --kernel reduce --type {}) | | | | | | | | |\n", log_n,
              to_string(op), type, type);
          continue;
        }
        const HostBuffers inputs = bench::bench_inputs(reduce, problem);
        const bench::DeviceBytes in(inputs.at("in"));
        const bench::DeviceBytes out(type == "float64" ? 8 : 4);
        bench::CubReduce cub(in.get(), out.get(), problem.size(), type == "float64", cub_op(op));
        const Measurement cub_time = bench.time([&](cudaStream_t s) { CUTUNE_CUDART(cub.run(s)); });
        const Verdict cub_ok = bench::check_baseline(reduce, problem, inputs, "out", out.get(), out.bytes());
        if (!cub_ok.ok) throw Error("CUB's reduction disagrees with the reference: " + cub_ok.message);

        const double bytes = reduce.work(problem).bytes;
        const Measurement copy = bench.time_copy_moving(bytes);
        std::cout << fmt::format(
            "| 2^{} | {} | {} | `{}` | {:.4f} | {:.4f} | {:.4f} | {:.2f}x | {:.0f} | {:.0f} | {:.2f} | {:.2f} |\n",
            log_n, to_string(op), type, ours->label, ours->median_ms, cub_time.median_ms, copy.median_ms,
            cub_time.median_ms / ours->median_ms, bytes / ours->median_ms / 1e6, bytes / cub_time.median_ms / 1e6,
            copy.median_ms / ours->median_ms, copy.median_ms / cub_time.median_ms);
      }
    }
  });
}
