// Writes a results database for report tests without a GPU: a tuning history with the shape of
// a real one (several problems, convergence over time, failures of every kind) and hostile
// strings wherever the database holds text — family, parameter, value and device names, errors.
//
//   make_report_fixture PATH [RESULTS]
//
// Runs, in order of their ids:
//   1  scan on Fixture GPU (RESULTS results over four problem sizes)
//   2  the hostile family on Fixture GPU (RESULTS / 10)
//   3  scan on a second device, Fixture GPU B (RESULTS / 5, same problems, other configs best)
//   4  a Kernel Tuner import on a device known by name only: zeros for everything but the name,
//      a parameter with a single value, and times outside their samples' min–max range
//   5  a T4 import of the same family on the same device
// and bench baselines for both scan devices.
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>

#include <fmt/format.h>

#include "store.hpp"

namespace {

using namespace cutune::db;
const std::string kEvil = "</script><img src=x onerror=alert(1)>";

DeviceRecord real_device(const std::string& uuid, const std::string& name, int cc_major, double copy_gbs) {
  DeviceRecord d;
  d.uuid = uuid;
  d.name = name;
  d.cc_major = cc_major;
  d.sm_count = cc_major == 9 ? 132 : 108;
  d.memory_bytes = cc_major == 9 ? 150'000'000'000 : 80'000'000'000;
  d.l2_bytes = (cc_major == 9 ? 60 : 40) << 20;
  d.memory_clock_khz = cc_major == 9 ? 3'201'000 : 1'593'000;
  d.bus_width_bits = cc_major == 9 ? 6144 : 5120;
  d.theoretical_bandwidth_gbs = cc_major == 9 ? 4916 : 2039;
  d.driver_version = 13000;
  d.nvrtc_version = "13.0";
  d.copy_bandwidth_gbs = copy_gbs;
  return d;
}

// A tuning history of `count` results of `family` on one device, over four problem sizes.
void tuning_run(Store& store, std::int64_t device, double copy_gbs, const std::string& family, int count, double speed,
                std::mt19937_64& rng) {
  std::normal_distribution<double> noise(0, 0.25);
  const std::vector<std::string> statuses{"compile_error", "load_error", "wrong_result", "runtime_fault", "timeout"};
  const auto tmpl = store.upsert_template(family, "fixture-" + std::to_string(family.size()), "// fixture source");
  const auto run = store.begin_run({0, family, device, tmpl, "brute_force", 7, "max_evals=5000",
                                    "tune --kernel " + family + " --db /a/rather/long/path/to/the/results/database/of/" +
                                        "this/fixture/that/a/report/must/show/whole/cutune.db --max-evals 5000",
                                    "cutune fixture", "", "", ""});
  const std::vector<std::int64_t> sizes{1 << 12, 1 << 20, 10'000'000, 1 << 27};
  const bool hostile = family != "scan";
  cutune::sql::Transaction transaction(store.database());
  for (int i = 0; i < count; ++i) {
    const std::int64_t n = sizes[static_cast<std::size_t>(i) % sizes.size()];
    const auto problem = store.upsert_problem({0, family, fmt::format("n={},type=int32", n), n, "int32", "{}"});
    const int algo = static_cast<int>(rng() % 3), block = 64 << (rng() % 5), ept = 1 << (rng() % 5), vec = 1 << (rng() % 3);
    const std::string algo_name = algo == 2 ? kEvil : (algo ? "warp" : "blelloch");
    ResultRecord r;
    r.run_id = run;
    r.device_id = device;
    r.template_id = tmpl;
    r.problem_id = problem;
    // Unique per row, so that each result is its own configuration. The hostile family's JSON
    // names its last parameter differently from its text, so the report must carry that text.
    r.config = fmt::format("algo={},block={},ept={},vec={},pad={}", algo_name, block, ept, vec, i);
    r.config_json = fmt::format(R"({{"algo":"{}","block":{},"ept":{},"vec":{},"{}":{}}})",
                                algo == 2 ? "<\\/script><img src=x onerror=alert(1)>" : algo_name, block, ept, vec,
                                hostile ? "pad</script><img src=x onerror=alert(1)>" : "pad", hostile ? i % 2 : i);
    r.launch_json = "[]";
    r.elapsed_s = 0.05 * i;
    r.compile_s = 0.03;
    r.verify_s = 0.01;
    r.benchmark_s = 0.01;
    r.created_at = "2026-01-01T00:00:00Z";
    if (rng() % 20 == 0) {
      r.status = statuses[rng() % statuses.size()];
      r.error = r.status + ": " + kEvil + " at index " + std::to_string(rng() % 1000);
      if (r.status == "wrong_result") r.error_index = static_cast<std::int64_t>(rng() % 1000);
    } else {
      r.status = "ok";
      // Block and elements per thread interact: large blocks want few elements each.
      const double fit = std::fabs(std::log2(static_cast<double>(block) / 64) - 4 + std::log2(static_cast<double>(ept)));
      const double floor_ms = (16.0 * static_cast<double>(n) / 4.1e9 + 0.004) / speed;
      const double ms = floor_ms * std::exp(std::fabs(noise(rng)) * 0.5 + 0.12 * fit + (algo == 1 ? 0.1 : 0) + 0.05 * vec);
      r.time_ms_median = ms;
      r.time_ms_min = ms * 0.98;
      r.time_ms_max = ms * 1.05;
      r.time_ms_stdev = ms * 0.01;
      r.samples = 10 + static_cast<int>(rng() % 50);
      r.gbs = 16.0 * static_cast<double>(n) / (ms * 1e6);
      r.copy_fraction = *r.gbs / copy_gbs;
    }
    store.insert_result(r);
  }
  transaction.commit();
  store.finish_run(run, "finished");
}

// A run as an import creates it (db/interchange_kernel_tuner.cpp): strategy kernel_tuner_import or
// t4_import, the device known by name, configs with a parameter that never changes.
void imported_run(Store& store, std::int64_t device, const std::string& strategy, const std::string& problem_key, int count,
                  std::mt19937_64& rng) {
  const std::string family = "imported";
  const auto tmpl = store.upsert_template(family, "kernel-tuner-fixture", "(imported)");
  const auto run = store.begin_run({0, family, device, tmpl, strategy, 0, "", "import-kt " + problem_key + ".json",
                                    "cutune 0.1.0", "", "", ""});
  const std::int64_t side = problem_key.find("4096") != std::string::npos ? 4096 : 2048;
  const auto problem = store.upsert_problem({0, family, problem_key, side * side, "", "{}"});
  cutune::sql::Transaction transaction(store.database());
  for (int i = 0; i < count; ++i) {
    const int tile = 1 << (1 + i % 5), unroll = 1 + (i / 5) % 4, block_x = 32 << (i / 20 % 4);
    ResultRecord r;
    r.run_id = run;
    r.device_id = device;
    r.template_id = tmpl;
    r.problem_id = problem;
    r.config = fmt::format("block_x={},tile={},unroll={},use_padding=1", block_x, tile, unroll);
    r.config_json = fmt::format(R"({{"block_x":{},"tile":{},"unroll":{},"use_padding":1}})", block_x, tile, unroll);
    r.launch_json = "[]";
    r.created_at = "2023-01-26T01:05:09Z";
    r.elapsed_s = i;
    r.status = "ok";
    const double ms = 1.0 + 0.3 * std::fabs(tile - 8) / 8 + 0.1 * unroll + 0.05 * block_x / 32 + 0.01 * static_cast<double>(rng() % 10);
    r.time_ms_median = ms;
    r.time_ms_min = ms * 0.99;
    r.time_ms_max = ms * 1.02;
    // Every seventh: the file's time is not a statistic of its own samples.
    if (i % 7 == 3) r.time_ms_max = r.time_ms_min = ms * 0.5;
    r.time_ms_stdev = ms * 0.01;
    r.samples = 7;
    store.insert_result(r);
  }
  transaction.commit();
  store.finish_run(run, "finished");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: make_report_fixture PATH [RESULTS]\n";
    return 2;
  }
  const std::string path = argv[1];
  const int total = argc > 2 ? std::atoi(argv[2]) : 10000;
  Store store(path);

  const auto device = store.upsert_device(real_device("GPU-fixture-0000-1111-2222", "Fixture GPU " + kEvil, 9, 4134));
  store.set_copy_bandwidth(device, 4134);
  const auto device_b = store.upsert_device(real_device("GPU-fixture-bbbb-1111-2222", "Fixture GPU B", 8, 1650));
  store.set_copy_bandwidth(device_b, 1650);
  DeviceRecord by_name;  // as a Kernel Tuner or T4 import stores it: a name, nothing measured
  by_name.name = "Imported GPU " + kEvil;
  by_name.uuid = "kernel-tuner-fixture-" + std::to_string(total);
  const auto imported = store.upsert_device(by_name);

  std::mt19937_64 rng(2026);
  tuning_run(store, device, 4134, "scan", total, 1.0, rng);  // the scan report alone holds `total`
  tuning_run(store, device, 4134, kEvil, total / 10, 1.0, rng);
  tuning_run(store, device_b, 1650, "scan", total / 5, 0.45, rng);
  imported_run(store, imported, "kernel_tuner_import", "problem_size=4096x4096", 80, rng);
  imported_run(store, imported, "t4_import", "problem_size=2048x2048", 40, rng);

  const std::vector<std::int64_t> sizes{1 << 12, 1 << 20, 10'000'000, 1 << 27};
  for (const auto& [dev, speed] : {std::pair{device, 1.0}, std::pair{device_b, 0.45}})
    for (const std::string& family : {std::string("scan"), kEvil})
      for (const std::int64_t n : sizes)
        store.add_baseline({dev, family, fmt::format("n={},type=int32", n), "library " + kEvil,
                            16.0 * static_cast<double>(n) / 3.5e9 / speed, 16.0 * static_cast<double>(n) / 3.9e9 / speed,
                            "algo=" + kEvil, "", "fixture"});
  std::cout << "wrote " << total + total / 10 + total / 5 + 120 << " results to " << path << "\n";
  return 0;
}
