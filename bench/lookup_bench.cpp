// Lookup latency: a cold open + first query on a database of 100 000 results, per fallback
// level, and cached lookups after the first. Writes a Markdown table to stdout.
//
//   lookup_bench [--db PATH] [--repeats N]
//
// "Cold" is a new connection with an empty lookup cache; the operating system's page cache is
// warm (the file was just written), as it is for an application that runs more than once.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

#include "lookup.hpp"
#include "store.hpp"

using namespace cutune;

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kDevices = 10, kConfigs = 500;
const std::vector<std::int64_t> kSizes{1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 22, 10'000'000, 1 << 24, 1 << 27};
const std::vector<std::string> kTypes{"int32", "int64"};

std::string config_of(int i) {
  static const char* algos[] = {"blelloch", "warp", "lookback"};
  return std::string("algo=") + algos[i % 3] + ",block=" + std::to_string(64 << (i % 5)) + ",ept=" +
         std::to_string(1 + i / 15) + ",vec=1,pad=" + std::to_string(i % 2);
}

// kDevices × |kSizes| × |kTypes| × kConfigs = 100 000 results, in one transaction.
void build_database(const std::string& path) {
  db::Store store(path);
  sql::Transaction transaction(store.database());
  const auto tmpl = store.upsert_template("scan", "bench", "// bench");
  for (int d = 0; d < kDevices; ++d) {
    db::DeviceRecord device;
    device.uuid = "GPU-bench-" + std::to_string(d);
    device.name = "Bench GPU " + std::to_string(d % 5);
    device.cc_major = 8 + d % 2;
    const auto device_id = store.upsert_device(device);
    const auto run = store.begin_run({0, "scan", device_id, tmpl, "brute_force", 1, "", "bench", "bench", "", "", ""});
    for (const auto& type : kTypes)
      for (std::int64_t n : kSizes) {
        const std::string key = "n=" + std::to_string(n) + ",type=" + type;
        const auto problem = store.upsert_problem({0, "scan", key, n, type, "{}"});
        for (int c = 0; c < kConfigs; ++c) {
          db::ResultRecord r;
          r.run_id = run;
          r.device_id = device_id;
          r.template_id = tmpl;
          r.problem_id = problem;
          r.config = config_of(c);
          r.config_json = "{}";
          r.status = c % 10 == 9 ? "compile_error" : "ok";
          if (r.status == "ok") r.time_ms_median = 1.0 + ((c * 7919 + d * 104729 + n) % 1000) / 100.0;
          r.launch_json = R"([{"kernel":"scan_lookback","grid":[512,1,1],"block":[256,1,1],"dynamic_shared_bytes":0}])";
          store.insert_result(r);
        }
      }
  }
  transaction.commit();
}

struct Case {
  const char* name;
  lookup::Query query;
};

// A result stored after the last refresh: lookups must score every result themselves.
void make_family_defaults_stale(const std::string& path) {
  db::Store store(path);
  auto s = store.database().prepare("UPDATE results SET elapsed_s = elapsed_s + 1 WHERE id = 1");
  s.run();
}

// CPU time of this thread: what a lookup costs, apart from waiting for a core on a busy machine.
double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string path;
  int repeats = 21;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--db") path = argv[i + 1];
    if (std::string(argv[i]) == "--repeats") repeats = std::stoi(argv[i + 1]);
  }
  const bool own_file = path.empty();
  if (own_file) path = (std::filesystem::temp_directory_path() / ("cutune-lookup-bench-" + std::to_string(getpid()) + ".db")).string();
  if (!std::filesystem::exists(path)) {
    const auto started = Clock::now();
    build_database(path);
    std::fprintf(stderr, "built %s in %.1f s\n", path.c_str(), std::chrono::duration<double>(Clock::now() - started).count());
  }
  std::int64_t results = 0;
  {
    db::Store store(path);
    store.refresh_family_defaults();
    results = store.result_count();
  }

  const std::vector<Case> cases{
      {"exact device (UUID), exact size", {"scan", {"GPU-bench-3", "", 9, 0}, {1 << 20, "int32"}}},
      {"exact device (UUID), nearest size", {"scan", {"GPU-bench-3", "", 9, 0}, {3'000'000, "int32"}}},
      {"same compute capability", {"scan", {"GPU-unknown", "Unknown GPU", 9, 0}, {1 << 20, "int32"}}},
      {"family default, precomputed", {"scan", {"GPU-unknown", "Unknown GPU", 7, 5}, {1 << 20, "int32"}}},
      {"built-in default", {"scan", {"GPU-bench-3", "", 9, 0}, {1 << 20, "uint32"}}},
      {"family default, stale: scored here", {"scan", {"GPU-unknown", "Unknown GPU", 7, 5}, {1 << 20, "int32"}}},
  };

  std::printf("database: %lld results, %d devices, %zu problems\n\n", static_cast<long long>(results), kDevices,
              kSizes.size() * kTypes.size());
  std::printf("| query | level | cold open + first query: wall, median (max) of %d | its thread CPU time, median | "
              "cached lookup: wall | its CPU |\n",
              repeats);
  std::printf("|---|---|---|---|---|---|\n");
  for (const Case& c : cases) {
    if (&c == &cases.back()) make_family_defaults_stale(path);
    std::vector<double> cold_ms, cold_cpu_ms;
    std::string level;
    for (int i = 0; i < repeats; ++i) {
      const auto started = Clock::now();
      const double cpu_started = thread_cpu_ms();
      lookup::Database results_db(path);
      const auto match = results_db.find(c.query);
      cold_cpu_ms.push_back(thread_cpu_ms() - cpu_started);
      cold_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - started).count());
      level = lookup::to_string(match->level);
    }
    lookup::Database results_db(path);
    results_db.find(c.query);
    constexpr int kCached = 1'000'000;
    const auto started = Clock::now();
    const double cpu_started = thread_cpu_ms();
    std::size_t sink = 0;
    for (int i = 0; i < kCached; ++i) sink += results_db.find(c.query)->config.size();
    const double cached_cpu_ns = (thread_cpu_ms() - cpu_started) * 1e6 / kCached;
    const double cached_ns = std::chrono::duration<double, std::nano>(Clock::now() - started).count() / kCached;
    std::printf("| %s | %s | %.2f ms (%.2f) | %.2f ms | %.0f ns | %.0f ns |\n", c.name, level.c_str(), median(cold_ms),
                *std::max_element(cold_ms.begin(), cold_ms.end()), median(cold_cpu_ms), cached_ns, cached_cpu_ns);
    if (sink == 0) return 1;
  }
  if (own_file && !std::getenv("KEEP")) {
    std::filesystem::remove(path);
    std::filesystem::remove(path + "-wal");
    std::filesystem::remove(path + "-shm");
  }
  return 0;
}
