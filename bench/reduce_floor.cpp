// bench_reduce_floor [--db PATH] [--device N]: where the time of a float sum of 2^20 elements
// goes, timed like every bench baseline (BenchSession::time).
//
// Why it exists: reduce's target of 1.5x CUB at 2^20 needs about 5.9 us, and every config of the
// family's space measures 6.3 us or more. This splits that time into what no kernel can avoid (an
// event-timed launch, the output's initialisation) and what reading 4 MiB costs, and shows the
// same for CUB. Each operation is timed after two kinds of L2 flush:
//   write: the tuner's and the bench's (a memset of 2x L2). L2 is then full of dirty lines, so
//          every line a kernel reads first evicts one, a write-back to DRAM.
//   read:  a read of 2x L2 instead, which leaves L2 clean.
// The probe kernels (reduce_floor_kernels.cu) only need to do the same memory work as the
// family's; the cluster sum's result is checked once, since it is the one new protocol here.
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include <fmt/format.h>

#include "bench_common.hpp"
#include "core/error.hpp"
#include "cub_reduce.hpp"
#include "reduce_floor_kernels.hpp"

using namespace cutune;
using namespace cutune::bench;

int main(int argc, char** argv) {
  return bench_main("bench_reduce_floor", [&] {
    BenchSession bench(parse_bench_args(argc, argv));
    bench.print_title("reduce floor at n = 2^20, float sum, median us");
    // Ones, so that the sum is known.
    const std::vector<float> ones(kFloorElements, 1.0f);
    std::vector<std::byte> host(ones.size() * sizeof(float));
    std::memcpy(host.data(), ones.data(), host.size());
    const DeviceBytes in(host);
    const DeviceBytes out(sizeof(float));
    CubReduce cub(in.get(), out.get(), kFloorElements, false, CubOp::sum);
    CUTUNE_CUDART(allow_cluster_of_16());

    launch_cluster_sum(16, in.as<float>(), out.as<float>(), nullptr);
    float check = 0;
    CUTUNE_CUDART(cudaMemcpy(&check, out.get(), sizeof check, cudaMemcpyDeviceToHost));
    if (check != static_cast<float>(kFloorElements))
      throw Error(fmt::format("the cluster sum of {} ones gave {}", kFloorElements, check));

    const auto memset_output = [&](cudaStream_t s) { CUTUNE_CUDART(cudaMemsetAsync(out.get(), 0, sizeof(float), s)); };
    struct Row {
      const char* what;
      std::function<void(cudaStream_t)> launch;
    };
    const std::vector<Row> rows{
        {"empty kernel", [](cudaStream_t s) { launch_empty(s); }},
        {"memset of the 4-byte output", memset_output},
        {"one-pass sum kernel alone", [&](cudaStream_t s) { launch_one_pass_sum(in.as<float>(), out.as<float>(), s); }},
        {"memset + one-pass sum kernel",
         [&](cudaStream_t s) {
           memset_output(s);
           launch_one_pass_sum(in.as<float>(), out.as<float>(), s);
         }},
        {"one cluster of 8 blocks, no initialisation",
         [&](cudaStream_t s) { launch_cluster_sum(8, in.as<float>(), out.as<float>(), s); }},
        {"one cluster of 16 blocks, no initialisation",
         [&](cudaStream_t s) { launch_cluster_sum(16, in.as<float>(), out.as<float>(), s); }},
        {"cub::DeviceReduce::Sum", [&](cudaStream_t s) { CUTUNE_CUDART(cub.run(s)); }},
    };
    std::printf("| operation | after a write flush (the bench's) | after a read flush (clean L2) |\n|---|---|---|\n");
    for (const auto& row : rows)
      std::printf("| %s | %.2f | %.2f |\n", row.what, 1000 * bench.time(row.launch).median_ms,
                  1000 * bench.time(row.launch, BenchSession::L2Flush::read).median_ms);
  });
}
