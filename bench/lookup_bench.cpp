// Lookup latency: a cold open + first query per fallback level, then lookups after the first on the
// same lookup::Database, with the same query again and with a different n on every call. Two
// databases: 100 000 results of 500 configs per problem, and 11 130 configs per problem (222 600
// results). The stale rows come after one result was stored without a refresh, as while a tuner
// is writing; the next three after every result of one problem on one device was stored again,
// as a tuning run killed before its refresh leaves it (the tuner refreshes after each problem);
// the last two after every result of the device was, which no writer leaves since. Then the
// lowest-energy objective (issue 20) within 5 % of the fastest, after the queried device's results
// were given energies. Writes a Markdown table to stdout.
//
//   lookup_bench [--dir FOLDER] [--repeats N] [--only 100k|11k]
//
// "Cold" is a new connection with an empty lookup cache; the operating system's page cache is
// warm (the file was just written), as it is for an application that runs more than once. The
// databases are built in FOLDER (default: a temporary folder, removed at the end) unless they
// are there already; each run refreshes them first.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <unistd.h>

#include "lookup.hpp"
#include "store.hpp"

using namespace cutune;

namespace {

using Clock = std::chrono::steady_clock;

struct BenchDevice {
  std::string uuid, name;
  int cc_major, cc_minor;
};

struct BenchDatabase {
  std::string name;  // "100k"
  std::string family;
  std::vector<BenchDevice> devices;
  std::vector<std::int64_t> sizes;
  std::vector<std::string> types;
  int configs = 0;
  std::function<std::string(int)> config_of;
};

std::string scan_config(int i) {
  static const char* algos[] = {"blelloch", "warp", "lookback"};
  return std::string("algo=") + algos[i % 3] + ",block=" + std::to_string(64 << (i % 5)) +
         ",ept=" + std::to_string(1 + i / 15) + ",vec=1,pad=" + std::to_string(i % 2);
}

// Distinct matmul-like configs: the index in mixed radix over the axes, the last axis unbounded.
std::string matmul_config(int i) {
  static const char* algos[] = {"regtile", "simple", "warptile"};
  const int tile = 16 << (i % 4), ept = 1 << (i / 4 % 4), pad = i / 16 % 2, vec = 1 << (i / 32 % 3),
            minblocks = 1 + i / 96 % 2, bk = 4 << (i / 192 % 3), splitk = 1 + i / 576;
  return std::string("algo=") + algos[i % 3] + ",tile=" + std::to_string(tile) + ",ept=" + std::to_string(ept) +
         ",pad=" + std::to_string(pad) + ",vec=" + std::to_string(vec) + ",minblocks=" + std::to_string(minblocks) +
         ",bk=" + std::to_string(bk) + ",splitk=" + std::to_string(splitk);
}

BenchDatabase hundred_thousand_results() {
  BenchDatabase b{"100k",
                  "scan",
                  {},
                  {1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 22, 10'000'000, 1 << 24, 1 << 27},
                  {"int32", "int64"},
                  500,
                  scan_config};
  for (int d = 0; d < 10; ++d)
    b.devices.push_back({"GPU-bench-" + std::to_string(d), "Bench GPU " + std::to_string(d % 5), 8 + d % 2, 0});
  return b;
}

BenchDatabase eleven_thousand_configs() {
  BenchDatabase b{"11k", "matmul", {}, {}, {"float32"}, 11'130, matmul_config};
  for (std::int64_t side : {128, 256, 512, 768, 1024, 1536, 2048, 3072, 4096, 8192})
    b.sizes.push_back(side * side * side);
  b.devices = {{"GPU-big-0", "Big GPU 0", 9, 0}, {"GPU-big-1", "Big GPU 1", 8, 0}};
  return b;
}

double time_of(int config, std::size_t device, std::int64_t n) {
  const auto h =
      static_cast<std::uint64_t>(config) * 7919 + device * 104729 + static_cast<std::uint64_t>(n % 1'000'003);
  return 1.0 + static_cast<double>(h % 1000) / 100.0;
}

const char* kLaunch = R"([{"kernel":"bench","grid":[512,1,1],"block":[256,1,1],"dynamic_shared_bytes":0}])";

db::ResultRecord result_of(std::int64_t run, std::int64_t device_id, std::int64_t tmpl, std::int64_t problem,
                           const std::string& config, bool ok, double ms) {
  db::ResultRecord r;
  r.run_id = run;
  r.device_id = device_id;
  r.template_id = tmpl;
  r.problem_id = problem;
  r.config = config;
  r.config_json = "{}";
  r.status = ok ? "ok" : "compile_error";
  if (ok) r.time_ms_median = ms;
  r.launch_json = kLaunch;
  return r;
}

std::string problem_key(std::int64_t n, const std::string& type) { return "n=" + std::to_string(n) + ",type=" + type; }

// devices × sizes × types × configs results, a tenth of them failed, in one transaction.
void build(const BenchDatabase& b, const std::string& path) {
  db::Store store(path);
  const auto tmpl = store.upsert_template(b.family, "bench", "// bench");
  std::vector<std::int64_t> device_ids, runs;
  for (const BenchDevice& d : b.devices) {
    db::DeviceRecord device;
    device.uuid = d.uuid;
    device.name = d.name;
    device.cc_major = d.cc_major;
    device.cc_minor = d.cc_minor;
    device_ids.push_back(store.upsert_device(device));
    runs.push_back(
        store.begin_run({0, b.family, device_ids.back(), tmpl, "brute_force", 1, "", "bench", "bench", "", "", ""}));
  }
  std::vector<std::string> configs;
  for (int c = 0; c < b.configs; ++c) configs.push_back(b.config_of(c));
  sql::Transaction transaction(store.database());
  for (std::size_t d = 0; d < b.devices.size(); ++d)
    for (const auto& type : b.types)
      for (std::int64_t n : b.sizes) {
        const auto problem = store.upsert_problem({0, b.family, problem_key(n, type), n, type, "{}"});
        for (int c = 0; c < b.configs; ++c)
          store.insert_result(
              result_of(runs[d], device_ids[d], tmpl, problem, configs[c], c % 10 != 9, time_of(c, d, n)));
      }
  transaction.commit();
}

// Every result of the device `query` names stored again after the last refresh, as a whole
// tuning run of it would (its times unchanged, so the answers are too).
// Every result of the queried device stored again without a refresh: on one problem only (`key`),
// as a tuning run that was killed leaves it (the tuner refreshes after each problem), or on all of
// them (no writer leaves that since; older ones did, and a hand-made UPDATE can).
void rewrite_device(const std::string& path, const lookup::Query& query, const std::string& key = {}) {
  db::Store store(path);
  sql::Transaction transaction(store.database());
  store.database()
      .prepare(
          "UPDATE results SET time_ms_median = time_ms_median * 1.0 WHERE device_id = "
          "(SELECT id FROM devices WHERE uuid = ?1) AND (?2 = '' OR problem_id IN (SELECT id FROM problems WHERE key = "
          "?2))")
      .bind(1, query.device.uuid)
      .bind(2, key)
      .run();
  transaction.commit();
}

// One result stored after the last refresh, as by a tuner writing right now: a config not
// measured before, on the device and problem that `query` asks about.
void store_one_result(const BenchDatabase& b, const std::string& path, const lookup::Query& query) {
  db::Store store(path);
  auto s = store.database().prepare(
      "SELECT d.id, p.id, (SELECT id FROM templates WHERE family = ?1), (SELECT MAX(id) FROM runs) FROM devices d, "
      "problems p"
      " WHERE d.uuid = ?2 AND p.family = ?1 AND p.key = ?3");
  s.bind(1, b.family).bind(2, query.device.uuid).bind(3, problem_key(query.problem.size, query.problem.dtype));
  if (!s.step()) throw std::runtime_error("no problem to store a result for");
  store.add_result(
      result_of(s.column_int(3), s.column_int(0), s.column_int(2), s.column_int(1), b.config_of(b.configs), true, 0.5));
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

struct PerCall {
  double wall_ns = 0, cpu_ns = 0;
  long calls = 0;
};

// Lookups on one warm Database, each with the size `size_of(i)` gives, until at least 0.3 s have
// passed: batches double, so slow lookups are timed a few times and fast ones a million.
PerCall time_lookups(lookup::Database& results, lookup::Query query, const lookup::Objective& objective,
                     const std::function<std::int64_t(long)>& size_of) {
  PerCall t;
  std::size_t sink = 0;
  const auto started = Clock::now();
  const double cpu_started = thread_cpu_ms();
  for (long batch = 1; t.calls < 1'000'000; batch *= 2) {
    for (long i = 0; i < batch; ++i, ++t.calls) {
      query.problem.size = size_of(t.calls);
      sink += results.find(query, objective)->config.size();
    }
    if (std::chrono::duration<double>(Clock::now() - started).count() > 0.3) break;
  }
  t.wall_ns = std::chrono::duration<double, std::nano>(Clock::now() - started).count() / static_cast<double>(t.calls);
  t.cpu_ns = (thread_cpu_ms() - cpu_started) * 1e6 / static_cast<double>(t.calls);
  if (sink == 0) std::abort();
  return t;
}

std::string per_call(const PerCall& t) {
  char text[64];
  if (t.wall_ns < 10'000)
    std::snprintf(text, sizeof text, "%.2f µs | %.2f µs", t.wall_ns * 1e-3, t.cpu_ns * 1e-3);
  else
    std::snprintf(text, sizeof text, "%.2f ms | %.2f ms", t.wall_ns * 1e-6, t.cpu_ns * 1e-6);
  return text;
}

struct Case {
  const char* name;
  lookup::Query query;
  int stale = 0;  // 1: after store_one_result; 2: one problem rewritten too; 3: the whole device; 4: energies too
  lookup::Objective objective = lookup::Objective::fastest();
};

// Energies for every ok result of the queried device, as tune --energy would store them: they
// vary apart from the time, so that the least energy within 5 % is not always the fastest. Then a
// refresh, as after a tuning run, so that the cold lookups time the energy query and not the
// correction of the stale rows before.
void store_energies(const std::string& path, const lookup::Query& query) {
  db::Store store(path);
  {
    sql::Transaction transaction(store.database());
    store.database()
        .prepare(
            "UPDATE results SET energy_j = time_ms_median * (0.5 + (id * 7919 % 101) / 100.0), power_w = 300 "
            "WHERE status = 'ok' AND device_id = (SELECT id FROM devices WHERE uuid = ?1)")
        .bind(1, query.device.uuid)
        .run();
    transaction.commit();
  }
  store.refresh_family_defaults();
}

void run(const BenchDatabase& b, const std::string& path, int repeats) {
  if (!std::filesystem::exists(path)) {
    const auto started = Clock::now();
    build(b, path);
    std::fprintf(stderr, "built %s in %.1f s\n", path.c_str(),
                 std::chrono::duration<double>(Clock::now() - started).count());
  }
  std::int64_t results = 0;
  {
    db::Store store(path);
    const auto started = Clock::now();
    store.refresh_family_defaults();
    std::fprintf(stderr, "%s: refresh_family_defaults %.2f s\n", b.name.c_str(),
                 std::chrono::duration<double>(Clock::now() - started).count());
    results = store.result_count();
  }
  const BenchDevice& known = b.devices[b.devices.size() > 3 ? 3 : 0];
  const std::int64_t n = b.sizes[b.sizes.size() / 2];
  const std::string& type = b.types.front();
  const lookup::Query exact{b.family, {known.uuid, "", known.cc_major, known.cc_minor}, {n, type}};
  const lookup::Query same_cc{b.family, {"GPU-unknown", "Unknown GPU", known.cc_major, known.cc_minor}, {n, type}};
  const lookup::Query unknown{b.family, {"GPU-unknown", "Unknown GPU", 7, 5}, {n, type}};
  std::vector<Case> cases{
      {"exact device (UUID)", exact}, {"same compute capability", same_cc}, {"family default", unknown}};
  if (b.types.size() > 1) cases.push_back({"built-in default", {b.family, exact.device, {n, "uint32"}}});
  cases.push_back({"exact device (UUID), stale", exact, 1});
  cases.push_back({"same compute capability, stale", same_cc, 1});
  cases.push_back({"family default, stale", unknown, 1});
  cases.push_back({"exact device (UUID), a killed run's problem stale", exact, 2});
  cases.push_back({"same compute capability, a killed run's problem stale", same_cc, 2});
  cases.push_back({"family default, a killed run's problem stale", unknown, 2});
  cases.push_back({"exact device (UUID), every result of it stale", exact, 3});
  cases.push_back({"family default, every result of a device stale", unknown, 3});
  const auto energy = lookup::Objective::lowest_energy(0.05);
  cases.push_back({"exact device (UUID), with energies, fastest", exact, 4});
  cases.push_back({"exact device (UUID), lowest energy within 5 %", exact, 4, energy});
  cases.push_back({"same compute capability, lowest energy within 5 %", same_cc, 4, energy});

  std::printf("\n%s: %lld results, %zu devices, %zu problems, %d configs per problem (%s)\n\n", b.name.c_str(),
              static_cast<long long>(results), b.devices.size(), b.sizes.size() * b.types.size(), b.configs,
              b.family.c_str());
  std::printf(
      "| database | query | level | cold open + first query: wall, median (max) of %d | its CPU, median | "
      "same query again: wall | its CPU | n varying: wall per lookup | its CPU |\n",
      repeats);
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  int stale = 0;
  for (const Case& c : cases) {
    if (c.stale >= 1 && stale < 1) store_one_result(b, path, exact);
    if (c.stale >= 2 && stale < 2) rewrite_device(path, exact, problem_key(exact.problem.size, exact.problem.dtype));
    if (c.stale >= 3 && stale < 3) rewrite_device(path, exact);
    if (c.stale >= 4 && stale < 4) store_energies(path, exact);
    stale = c.stale;
    std::vector<double> cold_ms, cold_cpu_ms;
    std::string level;
    for (int i = 0; i < repeats; ++i) {
      const auto started = Clock::now();
      const double cpu_started = thread_cpu_ms();
      lookup::Database results_db(path);
      const auto match = results_db.find(c.query, c.objective);
      cold_cpu_ms.push_back(thread_cpu_ms() - cpu_started);
      cold_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - started).count());
      level = std::string(lookup::to_string(match->level)) +
              (match->chosen_by == lookup::Objective::Kind::lowest_energy ? ", lowest energy" : "");
    }
    lookup::Database results_db(path);
    results_db.find(c.query, c.objective);
    const PerCall same = time_lookups(results_db, c.query, c.objective, [&](long) { return c.query.problem.size; });
    // A different n on every call: 1 + (i · an odd number) mod 2^31 repeats no value before 2^31 calls.
    const PerCall varying = time_lookups(results_db, c.query, c.objective, [](long i) {
      return 1 + static_cast<std::int64_t>((i * 2654435761ULL) % (1ULL << 31));
    });
    std::printf("| %s | %s | %s | %.2f ms (%.2f) | %.2f ms | %s | %s |\n", b.name.c_str(), c.name, level.c_str(),
                median(cold_ms), *std::max_element(cold_ms.begin(), cold_ms.end()), median(cold_cpu_ms),
                per_call(same).c_str(), per_call(varying).c_str());
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string folder, only;
  int repeats = 21;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string option = argv[i];
    if (option == "--dir")
      folder = argv[i + 1];
    else if (option == "--repeats")
      repeats = std::stoi(argv[i + 1]);
    else if (option == "--only")
      only = argv[i + 1];
    else
      return std::fprintf(stderr, "usage: lookup_bench [--dir FOLDER] [--repeats N] [--only 100k|11k]\n"), 2;
  }
  const bool own_folder = folder.empty();
  if (own_folder)
    folder = (std::filesystem::temp_directory_path() / ("cutune-lookup-bench-" + std::to_string(getpid()))).string();
  std::filesystem::create_directories(folder);
  for (const BenchDatabase& b : {hundred_thousand_results(), eleven_thousand_configs()})
    if (only.empty() || only == b.name) run(b, folder + "/lookup-" + b.name + ".db", repeats);
  if (own_folder && !std::getenv("KEEP")) std::filesystem::remove_all(folder);
  return 0;
}
