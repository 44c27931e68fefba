#pragma once
// Builds small results databases for the db tests: devices, problems and results in a few lines,
// with the template, run and problem rows made on first use.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include "field_text.hpp"
#include "store.hpp"
#include "temp_folder.hpp"

namespace cutune::testing {

inline db::DeviceRecord device_record(const std::string& uuid, const std::string& name, int cc_major, int cc_minor) {
  db::DeviceRecord d;
  d.uuid = uuid;
  d.name = name;
  d.cc_major = cc_major;
  d.cc_minor = cc_minor;
  d.sm_count = 100;
  d.nvrtc_version = "13.0";
  return d;
}

// The launch plan a scan config would store, enough for the lookup to parse.
inline std::string launch_json_for(int block, int grid) {
  return R"([{"kernel":"scan_lookback","grid":[)" + std::to_string(grid) + R"(,1,1],"block":[)" +
         std::to_string(block) + R"(,1,1],"dynamic_shared_bytes":16904,"registers":32}])";
}

// A database as cutune 0.1 left it: schema version 1 and one stored result.
inline void create_version_1_database(const std::string& path) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  sql::Database raw(path, sql::Database::Mode::read_write_create);
  raw.exec(db::kSchemaV1);
  raw.exec(R"sql(
    INSERT INTO devices VALUES (1, 'GPU-old', 'Old GPU', 8, 0, 108, 1, 1, 1, 1, 1.0, 12000, '12.0', NULL, NULL);
    INSERT INTO templates VALUES (1, 'scan', 'h', 's', '2026-01-01T00:00:00Z');
    INSERT INTO problems VALUES (1, 'scan', 'n=1024,type=int32', 1024, 'int32',
                                 '{"n":1024,"type":"int32","starts_offset":0,"stops_offset":0}');
    INSERT INTO runs VALUES (1, 'scan', 1, 1, 'brute_force', 1, '', '', '', '2026-01-01T00:00:00Z', NULL, 'finished');
    INSERT INTO results (run_id, device_id, template_id, problem_id, config, config_json, status, time_ms_median,
                         samples, compile_s, verify_s, benchmark_s, error, launch_json, created_at, elapsed_s)
    VALUES (1, 1, 1, 1, 'algo=warp', '{"algo":"warp"}', 'ok', 0.5, 10, 0, 0, 0, '', '[]', '2026-01-01T00:00:00Z', 0);
    PRAGMA user_version=1;)sql");
}

class ResultsBuilder {
 public:
  explicit ResultsBuilder(db::Store& store, std::string template_hash = "template-1")
      : store_(store), template_hash_(std::move(template_hash)) {}

  std::int64_t device(const std::string& uuid, const std::string& name, int cc_major, int cc_minor) {
    return store_.upsert_device(device_record(uuid, name, cc_major, cc_minor));
  }

  std::int64_t problem(const std::string& family, std::int64_t n, const std::string& dtype) {
    const std::string key = "n=" + std::to_string(n) + ",type=" + dtype;
    return store_.upsert_problem(
        {0, family, key, n, dtype, R"({"n":)" + std::to_string(n) + R"(,"type":")" + dtype + "\"}"});
  }

  std::int64_t template_of(const std::string& family) {
    return store_.upsert_template(family, template_hash_, "// " + family + " source");
  }

  // One result; `config` is "name=value,…" with integer values except algo, which is a label.
  // Its plan is one scan launch unless `launch_json` says otherwise.
  db::ResultRecord result(std::int64_t device_id, const std::string& family, std::int64_t n, const std::string& dtype,
                          const std::string& config, std::optional<double> ms, const std::string& status = "ok",
                          const std::string& launch_json = {}) {
    db::ResultRecord r = record(device_id, family, n, dtype, config, ms, status, launch_json);
    store_.add_result(r);
    return r;
  }

  // An ok result with what it observed besides its time.
  db::ResultRecord observed(std::int64_t device_id, const std::string& family, std::int64_t n, const std::string& dtype,
                            const std::string& config, double ms, const db::Observations& observations) {
    db::ResultRecord r = record(device_id, family, n, dtype, config, ms, "ok", {});
    r.observations = observations;
    store_.add_result(r);
    return r;
  }

  // An ok result whose run of the plan took `energy_j` joules at `power_w` watts.
  db::ResultRecord with_energy(std::int64_t device_id, const std::string& family, std::int64_t n,
                               const std::string& dtype, const std::string& config, double ms,
                               std::optional<double> energy_j, std::optional<double> power_w = std::nullopt) {
    db::Observations o;
    o.energy_j = energy_j;
    o.power_w = power_w;
    if (energy_j) o.energy_method = "energy_counter";
    return observed(device_id, family, n, dtype, config, ms, o);
  }

  // The row result() stores, not stored.
  db::ResultRecord record(std::int64_t device_id, const std::string& family, std::int64_t n, const std::string& dtype,
                          const std::string& config, std::optional<double> ms, const std::string& status,
                          const std::string& launch_json) {
    db::ResultRecord r;
    r.template_id = template_of(family);
    r.device_id = device_id;
    r.run_id = run(device_id, r.template_id, family);
    r.problem_id = problem(family, n, dtype);
    r.config = config;
    r.config_json = config_json(config);
    r.status = status;
    r.time_ms_median = ms;
    if (ms) {
      r.time_ms_min = *ms * 0.95;
      r.time_ms_max = *ms * 1.1;
      r.time_ms_stdev = *ms * 0.01;
      r.samples = 20;
    }
    r.compile_s = 0.5;
    r.verify_s = 0.01;
    r.benchmark_s = 0.2;
    r.launch_json = launch_json.empty() ? launch_json_for(256, static_cast<int>((n + 2047) / 2048)) : launch_json;
    if (status != "ok") r.error = "failed: " + status;
    return r;
  }

  static std::string config_json(const std::string& config) {
    std::string json = "{";
    for (const auto& [name, value] : parse_named_values(config)) {
      const bool label = name == "algo";
      json += (json.size() > 1 ? "," : "") + ("\"" + name + "\":") + (label ? "\"" + value + "\"" : value);
    }
    return json + "}";
  }

 private:
  std::int64_t run(std::int64_t device_id, std::int64_t template_id, const std::string& family) {
    auto [it, fresh] = runs_.try_emplace({device_id, family}, 0);
    if (fresh)
      it->second = store_.begin_run(
          {0, family, device_id, template_id, "brute_force", 1, "unlimited", "test", "test", "", "", ""});
    return it->second;
  }

  db::Store& store_;
  std::string template_hash_;
  std::map<std::pair<std::int64_t, std::string>, std::int64_t> runs_;
};

}  // namespace cutune::testing
