// Writes a results database for report tests without a GPU: a tuning history with the shape of
// a real one (several problems, convergence over time, failures of every kind) and hostile
// strings wherever the database holds text — family, parameter, value and device names, errors.
//
//   make_report_fixture PATH [RESULTS]
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>

#include <fmt/format.h>

#include "store.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: make_report_fixture PATH [RESULTS]\n";
    return 2;
  }
  const std::string path = argv[1];
  const int total = argc > 2 ? std::atoi(argv[2]) : 10000;
  const std::string evil = "</script><img src=x onerror=alert(1)>";
  using namespace cutune::db;
  Store store(path);

  DeviceRecord d;
  d.uuid = "GPU-fixture-0000-1111-2222";
  d.name = "Fixture GPU " + evil;
  d.cc_major = 9;
  d.sm_count = 132;
  d.memory_bytes = 150'000'000'000;
  d.l2_bytes = 60 << 20;
  d.memory_clock_khz = 3'201'000;
  d.bus_width_bits = 6144;
  d.theoretical_bandwidth_gbs = 4916;
  d.driver_version = 13000;
  d.nvrtc_version = "13.0";
  const auto device = store.upsert_device(d);
  store.set_copy_bandwidth(device, 4134);

  std::mt19937_64 rng(2026);
  std::normal_distribution<double> noise(0, 0.25);
  const std::vector<std::string> statuses{"compile_error", "load_error", "wrong_result", "runtime_fault", "timeout"};
  for (const std::string& family : {std::string("scan"), evil}) {
    const auto tmpl = store.upsert_template(family, "fixture-" + std::to_string(family.size()), "// fixture source");
    const auto run = store.begin_run({0, family, device, tmpl, "brute_force", 7, "max_evals=5000", "tune --kernel " + family,
                                      "cutune fixture", "", "", ""});
    const int per_family = family == "scan" ? total : total / 10;  // the scan report alone holds `total`
    const std::vector<std::int64_t> sizes{1 << 12, 1 << 20, 10'000'000, 1 << 27};
    for (int i = 0; i < per_family; ++i) {
      const std::int64_t n = sizes[static_cast<std::size_t>(i) % sizes.size()];
      const auto problem = store.upsert_problem({0, family, fmt::format("n={},type=int32", n), n, "int32", "{}"});
      const int algo = static_cast<int>(rng() % 3), block = 64 << (rng() % 5), ept = 1 << (rng() % 5), vec = 1 << (rng() % 3);
      const std::string algo_name = algo == 2 ? evil : (algo ? "warp" : "blelloch");
      ResultRecord r;
      r.run_id = run;
      r.device_id = device;
      r.template_id = tmpl;
      r.problem_id = problem;
      // Unique per row, so that each result is its own configuration.
      r.config = fmt::format("algo={},block={},ept={},vec={},{}={}", algo_name, block, ept, vec, "pad", i);
      r.config_json = fmt::format(R"({{"algo":"{}","block":{},"ept":{},"vec":{},"{}":{}}})", algo == 2 ? "<\\/script><img src=x onerror=alert(1)>" : algo_name,
                                  block, ept, vec, family == "scan" ? "pad" : "pad</script><img src=x onerror=alert(1)>", i % 2);
      r.launch_json = "[]";
      r.elapsed_s = 0.05 * i;
      r.compile_s = 0.03;
      r.verify_s = 0.01;
      r.benchmark_s = 0.01;
      if (rng() % 20 == 0) {
        r.status = statuses[rng() % statuses.size()];
        r.error = r.status + ": " + evil + " at index " + std::to_string(rng() % 1000);
        if (r.status == "wrong_result") r.error_index = static_cast<std::int64_t>(rng() % 1000);
      } else {
        r.status = "ok";
        const double floor_ms = 16.0 * static_cast<double>(n) / 4.1e9 + 0.004;
        const double ms = floor_ms * std::exp(std::fabs(noise(rng)) + 0.3 * std::log2(static_cast<double>(block) / 64) * 0.2);
        r.time_ms_median = ms;
        r.time_ms_min = ms * 0.98;
        r.time_ms_max = ms * 1.05;
        r.time_ms_stdev = ms * 0.01;
        r.samples = 10 + static_cast<int>(rng() % 50);
        r.gbs = 16.0 * static_cast<double>(n) / (ms * 1e6);
        r.copy_fraction = *r.gbs / 4134;
      }
      store.add_result(r);
    }
    store.finish_run(run, "finished");
    for (const std::int64_t n : sizes)
      store.add_baseline({device, family, fmt::format("n={},type=int32", n), "library " + evil, 16.0 * static_cast<double>(n) / 3.5e9,
                          16.0 * static_cast<double>(n) / 3.9e9, "algo=" + evil, "", "fixture"});
  }
  std::cout << "wrote " << total + total / 10 << " results to " << path << "\n";
  return 0;
}
