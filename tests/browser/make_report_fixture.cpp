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
//   6  scan on Fixture GPU again, one more problem (n=65536): eight results with energy whose
//      Pareto front (faster or lower-energy than every other) is four configs, one of them
//      throttled and remeasured, and a result without energy
// and bench baselines for both scan devices.
//
// Observations (energy, clocks, resources; db/observations.hpp): run 1 has resources and clocks
// for every ok result but those of n=4096 (which have none), energy for n=10000000 only, a few
// throttled results, one remeasured, and compiler warnings; run 2 has resources and warnings
// with hostile text; runs 3 to 5 have none, as results stored before schema version 8.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <random>
#include <stdexcept>
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

// What the compiler and the driver would give a scan config on a GPU of 64K registers and 2048
// threads per SM: more elements per thread and wider vectors want more registers; past the block's
// share of the register file the compiler spills.
Observations resources(int block, int ept, int vec) {
  Observations o;
  const int demand = 18 + 4 * ept + 6 * vec, limit = std::min(255, 65536 / block);
  o.registers = std::min(demand, limit);
  o.spill_store_bytes = demand > limit ? 4 * (demand - limit) : 0;
  o.spill_load_bytes = demand > limit ? 6 * (demand - limit) : 0;
  o.local_bytes = *o.spill_store_bytes;
  o.static_shared_bytes = 4 * block;
  o.dynamic_shared_bytes = 0;
  const int by_threads = 2048 / block, by_registers = 65536 / (static_cast<int>(*o.registers) * block);
  o.blocks_per_sm = std::max(1, std::min({32, by_threads, by_registers}));
  o.occupancy = static_cast<double>(*o.blocks_per_sm * block) / 2048;
  return o;
}

// The board's energy for one run of `ms` at `watts`, as NVML's energy counter measures it.
void measure_energy(Observations& o, double ms, double watts) {
  o.power_w = watts;
  o.energy_j = watts * ms * 1e-3;
  o.energy_method = "energy_counter";
  o.energy_runs = std::max<std::int64_t>(10, static_cast<std::int64_t>(50 / ms));
}

// A tuning run's observations of result i: resources and the SM clock always, energy for the
// 10M-element problem, throttling now and then, compiler warnings for some configs.
void observe(Observations& o, int i, std::int64_t n, int block, int ept, int vec, double ms, bool hostile) {
  o = resources(block, ept, vec);
  o.sm_clock_mhz = 1980;
  if (n == 10'000'000) measure_energy(o, ms, 250 + 150 * *o.occupancy + (i * 7919 % 100) * 0.4);
  if (i % 1000 == 7) {
    o.throttled_samples = 2 + i % 5;
    o.throttle_reasons = i % 2000 == 7 ? "sw_power_cap" : "hw_thermal,sw_power_cap";
    o.sm_clock_mhz = 1650 + i % 100;
    o.remeasured = i == 7;
  }
  if (ept == 16 && vec == 4)
    o.compile_warnings =
        hostile ? "warning: " + kEvil : "ptxas warning : Registers are spilled to local memory in function 'scan'";
}

// A tuning history of `count` results of `family` on one device, over four problem sizes.
// observed: the results carry observations (see the top of the file); else none, as before
// schema version 8.
void tuning_run(Store& store, std::int64_t device, double copy_gbs, const std::string& family, int count, double speed,
                bool observed, std::mt19937_64& rng) {
  std::normal_distribution<double> noise(0, 0.25);
  const std::vector<std::string> statuses{"compile_error", "load_error", "wrong_result", "runtime_fault", "timeout"};
  const auto tmpl = store.upsert_template(family, "fixture-" + std::to_string(family.size()), "// fixture source");
  const auto run =
      store.begin_run({0, family, device, tmpl, "brute_force", 7, "max_evals=5000",
                       "tune --kernel " + family + " --db /a/rather/long/path/to/the/results/database/of/" +
                           "this/fixture/that/a/report/must/show/whole/cutune.db --max-evals 5000",
                       "cutune fixture", "", "", ""});
  const std::vector<std::int64_t> sizes{1 << 12, 1 << 20, 10'000'000, 1 << 27};
  const bool hostile = family != "scan";
  cutune::sql::Transaction transaction(store.database());
  for (int i = 0; i < count; ++i) {
    const std::int64_t n = sizes[static_cast<std::size_t>(i) % sizes.size()];
    const auto problem = store.upsert_problem({0, family, fmt::format("n={},type=int32", n), n, "int32", "{}"});
    const int algo = static_cast<int>(rng() % 3), block = 64 << (rng() % 5), ept = 1 << (rng() % 5),
              vec = 1 << (rng() % 3);
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
      const double fit =
          std::fabs(std::log2(static_cast<double>(block) / 64) - 4 + std::log2(static_cast<double>(ept)));
      const double floor_ms = (16.0 * static_cast<double>(n) / 4.1e9 + 0.004) / speed;
      const double ms =
          floor_ms * std::exp(std::fabs(noise(rng)) * 0.5 + 0.12 * fit + (algo == 1 ? 0.1 : 0) + 0.05 * vec);
      r.time_ms_median = ms;
      r.time_ms_min = ms * 0.98;
      r.time_ms_max = ms * 1.05;
      r.time_ms_stdev = ms * 0.01;
      r.samples = 10 + static_cast<int>(rng() % 50);
      r.gbs = 16.0 * static_cast<double>(n) / (ms * 1e6);
      r.copy_fraction = *r.gbs / copy_gbs;
      if (observed && n != sizes[0]) observe(r.observations, i, n, block, ept, vec, ms, hostile);
    }
    store.insert_result(r);
  }
  transaction.commit();
  store.finish_run(run, "finished");
}

// A run as an import creates it (db/interchange_kernel_tuner.cpp): strategy kernel_tuner_import or
// t4_import, the device known by name, configs with a parameter that never changes.
void imported_run(Store& store, std::int64_t device, const std::string& strategy, const std::string& problem_key,
                  int count, std::mt19937_64& rng) {
  const std::string family = "imported";
  const auto tmpl = store.upsert_template(family, "kernel-tuner-fixture", "(imported)");
  const auto run = store.begin_run(
      {0, family, device, tmpl, strategy, 0, "", "import-kt " + problem_key + ".json", "cutune 0.1.0", "", "", ""});
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
    const double ms = 1.0 + 0.3 * std::fabs(tile - 8) / 8 + 0.1 * unroll + 0.05 * block_x / 32 +
                      0.01 * static_cast<double>(rng() % 10);
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

// Run 6: scan on n=65536, nine ok results, eight with energy. The Pareto front is configs
// 0, 1, 3 and 5: 2 is slower than 1 and costs more; 4 is slower than 3 at more energy; 6 and 7
// are slower than 5 at more energy. Config 2 was throttled and remeasured; config 8 has no energy.
void energy_run(Store& store, std::int64_t device) {
  const std::string family = "scan";
  const auto tmpl = store.upsert_template(family, "fixture-" + std::to_string(family.size()), "// fixture source");
  const auto run = store.begin_run({0, family, device, tmpl, "brute_force", 7, "",
                                    "tune --kernel scan --n 65536 --energy", "cutune fixture", "", "", ""});
  const auto problem = store.upsert_problem({0, family, "n=65536,type=int32", 65536, "int32", "{}"});
  struct Point {
    int block, ept;
    double ms, watts;
  };
  const Point points[] = {{1024, 1, 0.10, 520}, {512, 2, 0.12, 400}, {512, 4, 0.13, 400},
                          {256, 2, 0.15, 280},  {256, 4, 0.20, 230}, {128, 2, 0.25, 150},
                          {128, 4, 0.30, 140},  {64, 4, 0.40, 120},  {64, 1, 0.11, 0}};
  cutune::sql::Transaction transaction(store.database());
  for (std::size_t k = 0; k < std::size(points); ++k) {
    const Point& p = points[k];
    ResultRecord r;
    r.run_id = run;
    r.device_id = device;
    r.template_id = tmpl;
    r.problem_id = problem;
    r.config = fmt::format("algo=warp,block={},ept={},vec=1,pad={}", p.block, p.ept, k);
    r.config_json = fmt::format(R"({{"algo":"warp","block":{},"ept":{},"vec":1,"pad":{}}})", p.block, p.ept, k);
    r.launch_json = "[]";
    r.elapsed_s = 0.05 * static_cast<double>(k);
    r.created_at = "2026-01-02T00:00:00Z";
    r.status = "ok";
    r.time_ms_median = p.ms;
    r.time_ms_min = p.ms * 0.99;
    r.time_ms_max = p.ms * 1.02;
    r.time_ms_stdev = p.ms * 0.005;
    r.samples = 20;
    r.observations = resources(p.block, p.ept, 1);
    r.observations.sm_clock_mhz = 1980;
    if (p.watts > 0) measure_energy(r.observations, p.ms, p.watts);
    if (k == 2) {
      r.observations.throttled_samples = 1;
      r.observations.throttle_reasons = "sw_power_cap";
      r.observations.remeasured = true;
      r.observations.sm_clock_mhz = 1710;
    }
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
  tuning_run(store, device, 4134, "scan", total, 1.0, true, rng);  // the scan report alone holds `total`
  tuning_run(store, device, 4134, kEvil, total / 10, 1.0, true, rng);
  tuning_run(store, device_b, 1650, "scan", total / 5, 0.45, false, rng);
  imported_run(store, imported, "kernel_tuner_import", "problem_size=4096x4096", 80, rng);
  imported_run(store, imported, "t4_import", "problem_size=2048x2048", 40, rng);
  energy_run(store, device);

  const std::vector<std::int64_t> sizes{1 << 12, 1 << 20, 10'000'000, 1 << 27};
  for (const auto& [dev, speed] : {std::pair{device, 1.0}, std::pair{device_b, 0.45}})
    for (const std::string& family : {std::string("scan"), kEvil})
      for (const std::int64_t n : sizes)
        store.add_baseline({dev, family, fmt::format("n={},type=int32", n), "library " + kEvil,
                            16.0 * static_cast<double>(n) / 3.5e9 / speed,
                            16.0 * static_cast<double>(n) / 3.9e9 / speed, "algo=" + kEvil, "", "fixture"});
  std::cout << "wrote " << total + total / 10 + total / 5 + 120 + 9 << " results to " << path << "\n";
  return 0;
}
