// The best stored avgmatvec config against its byte floor (the bytes it must move at the
// device-to-device copy bandwidth measured in the same run) and against a library pipeline:
// a warp-per-row average, then cublasSgemm (fp32, TF32 off) for the products.
//
//   bench_avgmatvec [--db PATH] [--device N]
#include <iostream>

#include <fmt/format.h>

#include "avgmatvec.hpp"
#include "bench_common.hpp"
#include "cublas_gemm.hpp"
#include "warp_average.hpp"

using namespace cutune;

int main(int argc, char** argv) {
  try {
    bench::BenchSession session(bench::parse_bench_args(argc, argv));
    const AvgmatvecFamily family;
    bench::Cublas cublas;
    std::cout << session.heading("avgmatvec vs byte floor and warp average + cublasSgemm");
    std::cout << "| N = M = L | best stored config | cutune ms | floor ms | cutune/floor | pipeline ms | pipeline/floor | "
                 "cutune/pipeline speed |\n";
    std::cout << "|---|---|---|---|---|---|---|---|\n";
    for (const Problem& problem : family.problems({})) {
      const auto n = problem.fields["n"].get<int>(), m = problem.fields["m"].get<int>(), l = problem.fields["l"].get<int>();
      const bench::StoredRun ours = bench::run_best_stored(session, family, problem);

      // The floor: moving the run's bytes (read v and A, write y) at copy speed, i.e. a copy of half of them.
      const double bytes = family.work(problem).bytes;
      const Measurement floor = bench::time_copy(static_cast<std::size_t>(bytes / 2), session.stream, session.options, session.l2_bytes);

      const HostBuffers inputs = bench::bench_inputs(family, problem);
      const bench::DeviceBytes v(inputs.at("v")), a(inputs.at("a"));
      const bench::DeviceBytes avg(static_cast<std::size_t>(n) * l * 4), y(static_cast<std::size_t>(l) * n * 4);
      auto pipeline = [&](cudaStream_t s) {
        CUTUNE_CUDART(bench::warp_average(v.as<float>(), static_cast<long long>(n) * l, m, avg.as<float>(), s));
        cublas.gemm(s, l, n, l, a.as<float>(), avg.as<float>(), true, y.as<float>());  // y = A avg^T
      };
      const Measurement theirs = bench::time_baseline(pipeline, session.stream, session.options, session.l2_bytes);
      HostBuffers pipeline_out;
      pipeline_out.at("y") = y.download();
      const Verdict verdict = family.compare(problem, family.reference(problem, inputs), pipeline_out);
      if (!verdict.ok) throw Error("the library pipeline fails the family's verification: " + verdict.message);

      const double ours_ms = ours.measurement.median_ms;
      std::cout << fmt::format("| {} | `{}` | {:.4f} | {:.4f} | {:.2f} | {:.4f} | {:.2f} | {:.2f}x |\n", n, ours.label, ours_ms,
                               floor.median_ms, floor.median_ms / ours_ms, theirs.median_ms, floor.median_ms / theirs.median_ms,
                               theirs.median_ms / ours_ms);
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "bench_avgmatvec: " << e.what() << "\n";
    return 1;
  }
}
