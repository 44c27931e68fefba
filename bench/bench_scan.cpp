// The best stored scan config against CUB's DeviceScan doing the same job (int32 starts/stops →
// int64 offsets through a transform iterator) and against a device-to-device copy of the bytes
// the scan must move, for n = 2^20 … 2^27, in one run on one GPU.
//
//   bench_scan [--db PATH] [--device N]
#include <cstring>
#include <iostream>

#include <fmt/format.h>

#include "bench_common.hpp"
#include "cub_scan.hpp"
#include "scan.hpp"

using namespace cutune;

int main(int argc, char** argv) {
  std::string db_path = db::default_database_path();
  int ordinal = 0;
  for (int i = 1; i + 1 < argc; ++i) {
    if (!std::strcmp(argv[i], "--db")) db_path = argv[i + 1];
    if (!std::strcmp(argv[i], "--device")) ordinal = std::atoi(argv[i + 1]);
  }
  try {
    Device device(ordinal);
    CUTUNE_CUDART(cudaSetDevice(ordinal));
    db::Store store(db_path);
    const ScanFamily scan;
    const MeasureOptions options = bench::bench_measure_options();
    const auto l2 = static_cast<std::size_t>(device.limits().l2_bytes);
    cudaStream_t stream;
    CUTUNE_CUDART(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

    std::cout << fmt::format("# scan vs CUB DeviceScan and copy — {} ({}), commit {}\n", device.fingerprint().name,
                             device.fingerprint().uuid, bench::bench_git_commit());
    std::cout << fmt::format("| n | best stored config | cutune ms | CUB ms | copy ms | cutune/CUB speed | cutune GB/s | CUB GB/s | cutune/copy | CUB/copy |\n");
    std::cout << "|---|---|---|---|---|---|---|---|---|---|\n";
    for (int log_n = 20; log_n <= 27; ++log_n) {
      const std::int64_t n = std::int64_t{1} << log_n;
      const Problem problem = ScanFamily::make_problem(n, "int32");
      const auto stored = bench::best_stored_config(store, "scan", device.fingerprint().uuid, "int32", n);
      if (!stored) throw Error("no stored int32 scan results for this device: run tune --kernel scan --device N first");
      const std::string label = stored->config + (stored->tuned_on == problem.key ? "" : " (tuned on " + stored->tuned_on + ")");
      const Outcome ours = bench::run_config(device, scan, problem, stored->config, options);
      if (ours.status != Status::ok) throw Error(stored->config + " failed in the bench: " + ours.error);

      // CUB on the same kind of data.
      HostBuffers inputs;
      for (const auto& spec : scan.buffers(problem))
        if (spec.role == BufferRole::input) inputs.at(spec.name).resize(static_cast<std::size_t>(spec.bytes));
      scan.generate_inputs(problem, 0x5eedULL, inputs);
      int *starts = nullptr, *stops = nullptr;
      long long* out = nullptr;
      CUTUNE_CUDART(cudaMalloc(&starts, n * 4));
      CUTUNE_CUDART(cudaMalloc(&stops, n * 4));
      CUTUNE_CUDART(cudaMalloc(&out, (n + 1) * 8));
      CUTUNE_CUDART(cudaMemcpy(starts, inputs.at("starts").data(), n * 4, cudaMemcpyHostToDevice));
      CUTUNE_CUDART(cudaMemcpy(stops, inputs.at("stops").data(), n * 4, cudaMemcpyHostToDevice));
      bench::CubScan cub(starts, stops, out, n);
      auto cub_scan = [&](cudaStream_t s) { CUTUNE_CUDART(cub.run(s)); };
      const Measurement cub_time = bench::time_baseline(cub_scan, stream, options, l2);
      // CUB's answer must match the reference too, or the comparison means nothing.
      std::vector<long long> cub_out(n + 1);
      CUTUNE_CUDART(cudaMemcpy(cub_out.data(), out, (n + 1) * 8, cudaMemcpyDeviceToHost));
      const HostBuffers expected = scan.reference(problem, inputs);
      if (std::memcmp(cub_out.data(), expected.at("tooffsets").data(), (n + 1) * 8) != 0) throw Error("CUB's scan disagrees with the reference");

      store.add_baseline({store.upsert_device(device.fingerprint()), "scan", problem.key, "cub::DeviceScan::InclusiveSum",
                          cub_time.median_ms, ours.measurement->median_ms, stored->config, "", bench::bench_git_commit()});
      const double bytes = scan.work(problem).bytes;
      const Measurement copy = bench::time_copy(static_cast<std::size_t>(bytes / 2), stream, options, l2);
      const double ours_ms = ours.measurement->median_ms;
      std::cout << fmt::format("| 2^{} | `{}` | {:.4f} | {:.4f} | {:.4f} | {:.2f}x | {:.0f} | {:.0f} | {:.2f} | {:.2f} |\n", log_n,
                               label, ours_ms, cub_time.median_ms, copy.median_ms, cub_time.median_ms / ours_ms,
                               bytes / ours_ms / 1e6, bytes / cub_time.median_ms / 1e6, copy.median_ms / ours_ms,
                               copy.median_ms / cub_time.median_ms);
      cudaFree(starts);
      cudaFree(stops);
      cudaFree(out);
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "bench_scan: " << e.what() << "\n";
    return 1;
  }
}
