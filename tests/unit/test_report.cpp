// Report generation without a browser: hostile strings stay inert, the data block round-trips,
// the page is complete and self-contained; provenance, unknown devices and source anomalies;
// observations (energy, clocks, resources) from new and old databases; the index and comparisons.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "report.hpp"
#include "schema.hpp"
#include "store.hpp"
#include "temp_folder.hpp"

using namespace cutune;

namespace {

const std::string kEvil = "</script><img src=x onerror=alert(1)>";

struct Fixture {
  cutune::testing::TempFolder folder{"cutune-report"};
  std::string path = folder.file("r.db");
  std::int64_t device = 0;
  Fixture() {
    db::Store store(path);
    db::DeviceRecord d;
    d.uuid = "GPU-" + kEvil;
    d.name = "GPU " + kEvil;
    device = store.upsert_device(d);
    const auto tmpl = store.upsert_template(kEvil, "h", "s");
    const auto problem = store.upsert_problem({0, kEvil, "n=10," + kEvil, 10, "int32", "{}"});
    const auto run = store.begin_run({0, kEvil, device, tmpl, kEvil, 1, kEvil, kEvil, kEvil, "", "", ""});
    for (int i = 0; i < 3; ++i) {
      db::ResultRecord r;
      r.run_id = run;
      r.device_id = device;
      r.template_id = tmpl;
      r.problem_id = problem;
      r.config = kEvil + "=" + std::to_string(i);
      r.config_json = nlohmann::json{{kEvil, kEvil + std::to_string(i)}}.dump();
      r.status = i == 2 ? "compile_error" : "ok";
      r.error = i == 2 ? kEvil : "";
      if (i < 2) r.time_ms_median = 1.0 + i;
      r.verified = i != 1;  // one ok result of a family with no reference
      r.launch_json = "[]";
      store.add_result(r);
    }
  }
};

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

nlohmann::json data_block(const std::string& page) {
  const std::string open = R"(<script id="report-data" type="application/json">)";
  const auto begin = page.find(open) + open.size();
  const auto end = page.find("</script>", begin);
  return nlohmann::json::parse(page.substr(begin, end - begin));
}

std::vector<unsigned char> base64_bytes(const std::string& text) {
  static const std::string digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::vector<unsigned char> out;
  unsigned buffer = 0;
  int bits = 0;
  for (char c : text) {
    if (c == '=') break;
    buffer = buffer << 6 | static_cast<unsigned>(digits.find(c));
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<unsigned char>(buffer >> bits & 0xff));
    }
  }
  return out;
}

// A packed column's numbers, as the page's unpack() reads them: float32 values, or indices into
// "values" (0: none), for every result or for those listed in "at" (the others: none).
std::vector<float> floats(const nlohmann::ordered_json& column, std::size_t results) {
  const auto bytes = base64_bytes(column["data"]);
  std::vector<float> entries;
  const std::string type = column["type"];
  if (type == "f32") {
    entries.resize(bytes.size() / 4);
    std::memcpy(entries.data(), bytes.data(), entries.size() * 4);
  } else {
    EXPECT_TRUE(column.contains("values")) << column.dump();
    const std::size_t width = type == "u8" ? 1 : 2;
    for (std::size_t k = 0; k + width <= bytes.size(); k += width) {
      const unsigned index = width == 1 ? bytes[k] : bytes[k] | bytes[k + 1] << 8;
      entries.push_back(index ? column["values"][index - 1].get<float>() : std::nanf(""));
    }
  }
  if (!column.contains("at")) {
    EXPECT_EQ(entries.size(), results);
    return entries;
  }
  std::vector<float> values(results, std::nanf(""));
  const auto at = base64_bytes(column["at"]["data"]);
  EXPECT_EQ(column["at"]["type"], "u8");  // the tests' results are few
  for (std::size_t k = 0; k < at.size(); ++k) values.at(at[k]) = entries.at(k);
  return values;
}

// One problem's results with observations (schema version 8): one measured with energy, one
// throttled, remeasured and spilling, with a hostile compiler warning, one with none, one failed.
struct Observed {
  cutune::testing::TempFolder folder{"cutune-report-observed"};
  std::string path = folder.file("o.db");
  std::int64_t device = 0;
  Observed() {
    db::Store store(path);
    db::DeviceRecord d;
    d.uuid = "GPU-observed";
    d.name = "H100";
    device = store.upsert_device(d);
    const auto tmpl = store.upsert_template("scan", "h", "s");
    const auto problem = store.upsert_problem({0, "scan", "n=1000", 1000, "int32", "{}"});
    const auto run =
        store.begin_run({0, "scan", device, tmpl, "brute_force", 1, "", "tune --energy", "cutune", "", "", ""});
    for (int i = 0; i < 4; ++i) {
      db::ResultRecord r;
      r.run_id = run;
      r.device_id = device;
      r.template_id = tmpl;
      r.problem_id = problem;
      r.config = "block=" + std::to_string(64 << i);
      r.config_json = R"({"block":)" + std::to_string(64 << i) + "}";
      r.status = i == 3 ? "compile_error" : "ok";
      if (i < 3) r.time_ms_median = 1.0 + i;
      r.launch_json = "[]";
      db::Observations& o = r.observations;
      if (i == 0) {
        o.energy_j = 0.002;
        o.power_w = 300;
        o.energy_method = "energy_counter";
        o.energy_runs = 100;
        o.sm_clock_mhz = 1980;
        o.throttled_samples = 0;
        o.registers = 32;
        o.spill_store_bytes = 0;
        o.spill_load_bytes = 0;
        o.static_shared_bytes = 1024;
        o.blocks_per_sm = 8;
        o.occupancy = 1.0;
      } else if (i == 1) {
        o.sm_clock_mhz = 1500;
        o.throttled_samples = 3;
        o.throttle_reasons = "sw_power_cap";
        o.remeasured = true;
        o.registers = 255;
        o.spill_store_bytes = 64;
        o.compile_warnings = "warning: " + kEvil;
      }
      store.add_result(r);
    }
  }
};

std::vector<unsigned char> bytes_of(const nlohmann::ordered_json& column) {
  EXPECT_EQ(column["type"], "u8");
  return base64_bytes(column["data"]);
}

// Two devices, one of them imported by name; runs of cutune, Kernel Tuner and T4.
struct Landscape {
  cutune::testing::TempFolder folder{"cutune-report-index"};
  std::string path = folder.file("l.db");
  std::int64_t h100 = 0, a100 = 0, named = 0;
  std::int64_t run_h100 = 0, run_a100 = 0, run_kt = 0, run_t4 = 0;
  Landscape() {
    db::Store store(path);
    db::DeviceRecord d;
    d.uuid = "GPU-h100";
    d.name = "H100";
    d.cc_major = 9;
    d.memory_clock_khz = 2'619'000;
    d.bus_width_bits = 5120;
    d.driver_version = 13000;
    d.nvrtc_version = "13.0";
    h100 = store.upsert_device(d);
    store.set_copy_bandwidth(h100, 3000);
    d.uuid = "GPU-a100";
    d.name = "A100";
    d.cc_major = 8;
    a100 = store.upsert_device(d);
    db::DeviceRecord by_name;
    by_name.uuid = "kernel-tuner-abc";
    by_name.name = "RTX " + kEvil;
    named = store.upsert_device(by_name);
    const auto tmpl = store.upsert_template("scan", "h", "s");
    const auto small = store.upsert_problem({0, "scan", "n=1000", 1000, "int32", "{}"});
    const auto large = store.upsert_problem({0, "scan", "n=1000000", 1000000, "int32", "{}"});
    const auto only_h100 = store.upsert_problem({0, "scan", "n=7", 7, "int32", "{}"});
    const auto add = [&](std::int64_t run, std::int64_t device, std::int64_t problem, int block, double ms,
                         std::optional<double> low = std::nullopt, std::optional<double> high = std::nullopt) {
      db::ResultRecord r;
      r.run_id = run;
      r.device_id = device;
      r.template_id = tmpl;
      r.problem_id = problem;
      r.config = "algo=warp,block=" + std::to_string(block);
      r.config_json = R"({"algo":"warp","block":)" + std::to_string(block) + "}";
      r.status = "ok";
      r.time_ms_median = ms;
      r.time_ms_min = low;
      r.time_ms_max = high;
      r.samples = low ? 5 : 0;
      r.gbs = 100 / ms;
      r.copy_fraction = 100 / ms / 3000;
      r.launch_json = "[]";
      store.add_result(r);
    };
    run_h100 = store.begin_run({0, "scan", h100, tmpl, "bayes_opt", 1, "", "tune", "cutune", "", "", ""});
    add(run_h100, h100, small, 128, 1.0, 0.9, 1.1);
    add(run_h100, h100, small, 256, 2.0, 1.9, 2.1);
    add(run_h100, h100, large, 256, 10.0, 9.0, 11.0);
    add(run_h100, h100, large, 512, 20.0, 19.0, 21.0);
    add(run_h100, h100, only_h100, 64, 0.1, 0.1, 0.1);
    run_a100 = store.begin_run({0, "scan", a100, tmpl, "bayes_opt", 1, "", "tune", "cutune", "", "", ""});
    add(run_a100, a100, small, 128, 2.0, 1.9, 2.1);
    add(run_a100, a100, large, 512, 15.0, 14.0, 16.0);
    add(run_a100, a100, large, 256, 30.0, 29.0, 31.0);
    run_kt = store.begin_run(
        {0, "scan", named, tmpl, "kernel_tuner_import", 0, "", "import-kt x.json", "cutune", "", "", ""});
    add(run_kt, named, small, 128, 5.0, 1.0, 2.0);  // the source's time lies outside its samples
    add(run_kt, named, small, 256, 6.0, 5.5, 6.5);
    run_t4 = store.begin_run({0, "scan", named, tmpl, "t4_import", 0, "", "import-t4 y.json", "cutune", "", "", ""});
    add(run_t4, named, large, 128, 40.0);  // no samples
    store.add_baseline({h100, "scan", "n=1000000", "CUB", 12.0, 10.0, "algo=warp,block=256", "", "abc"});
  }
};

}  // namespace

TEST(Report, HostileStringsStayInert) {
  Fixture f;
  sql::Database db(f.path, sql::Database::Mode::read_only);
  const auto data = report::collect(db, {f.device, kEvil, std::nullopt});
  const std::string page = report::render_html(data);
  EXPECT_EQ(count(page, "</script>"), 3u);  // data, Chart.js, page script: nothing else closes a script
  EXPECT_EQ(count(page, "<img"), 0u);
  EXPECT_EQ(page.find(kEvil), std::string::npos);
  EXPECT_NE(page.find("&lt;/script&gt;"), std::string::npos);  // the escaped title
}

TEST(Report, DataBlockRoundTrips) {
  Fixture f;
  sql::Database db(f.path, sql::Database::Mode::read_only);
  const auto data = report::collect(db, {f.device, kEvil, std::nullopt});
  const auto parsed = data_block(report::render_html(data));
  EXPECT_EQ(parsed["family"], kEvil);
  EXPECT_EQ(parsed["parameters"][0], kEvil);
  EXPECT_EQ(parsed["results"]["count"], 3);
  EXPECT_EQ(parsed["failures"][0]["status"], "compile_error");
  EXPECT_EQ(parsed["failures"][0]["messages"][0]["text"], kEvil);
  // The page says how many ok results were never checked against a reference.
  EXPECT_EQ(parsed["unverified"], 1);
  EXPECT_NE(report::render_html(data).find("id=\"unverified-warning\""), std::string::npos);
}

TEST(Report, ResultsTravelAsPackedColumns) {
  Fixture f;
  sql::Database db(f.path, sql::Database::Mode::read_only);
  const auto data = report::collect(db, {f.device, kEvil, std::nullopt});
  const auto median = floats(data["results"]["median"], 3);
  ASSERT_EQ(median.size(), 3u);
  EXPECT_FLOAT_EQ(median[0], 1.0f);
  EXPECT_FLOAT_EQ(median[1], 2.0f);
  EXPECT_TRUE(std::isnan(median[2]));  // the failed config has no time
  EXPECT_EQ(base64_bytes(data["results"]["config"]["data"]), (std::vector<unsigned char>{0, 1, 2}));
  EXPECT_EQ(data["results"]["config"]["type"], "u8");
  EXPECT_FALSE(data["results"].contains("gflops"));  // no result has one
  // Their text is not "name=value" of their values, so each config carries its own.
  EXPECT_EQ(data["configs"]["keys"].size(), 3u) << data["configs"]["keys"].dump();
  EXPECT_EQ(data["parameter_values"][0][1], kEvil + "1");
}

TEST(Report, ObservationsTravelAsColumnsWhereSomeResultHasThem) {
  Observed o;
  sql::Database db(o.path, sql::Database::Mode::read_only);
  const auto data = report::collect(db, {o.device, "scan", std::nullopt});
  const auto& results = data["results"];
  const auto energy = floats(results["energy_j"], 4);
  ASSERT_EQ(energy.size(), 4u);
  EXPECT_FLOAT_EQ(energy[0], 0.002f);
  EXPECT_TRUE(std::isnan(energy[1]) && std::isnan(energy[2]) && std::isnan(energy[3]));  // unknown, not 0
  const auto registers = floats(results["registers"], 4);
  EXPECT_FLOAT_EQ(registers[0], 32.0f);
  EXPECT_FLOAT_EQ(registers[1], 255.0f);
  EXPECT_TRUE(std::isnan(registers[2]));
  EXPECT_FLOAT_EQ(floats(results["spill_store_bytes"], 4)[0], 0.0f);  // 0 spill bytes is an observation
  EXPECT_FLOAT_EQ(floats(results["spill_store_bytes"], 4)[1], 64.0f);
  EXPECT_FLOAT_EQ(floats(results["occupancy"], 4)[0], 1.0f);
  EXPECT_FLOAT_EQ(floats(results["sm_clock_mhz"], 4)[1], 1500.0f);
  for (const char* measured :
       {"power_w", "energy_runs", "throttled_samples", "spill_load_bytes", "static_shared_bytes", "blocks_per_sm"})
    EXPECT_TRUE(results.contains(measured)) << measured;
  // Observations no result has stay out, as GB/s and GFLOP/s do.
  EXPECT_FALSE(results.contains("local_bytes"));
  EXPECT_FALSE(results.contains("dynamic_shared_bytes"));
  EXPECT_FALSE(results.contains("remeasured"));  // a flag: bit 8 of the flags column
  EXPECT_EQ(bytes_of(results["flags"]), (std::vector<unsigned char>{0, 8, 0, 0}));
  // Texts are sparse: the distinct texts, and the results that have one.
  EXPECT_EQ(results["energy_method"]["texts"], nlohmann::json::array({"energy_counter"}));
  EXPECT_EQ(bytes_of(results["energy_method"]["result"]), (std::vector<unsigned char>{0}));
  EXPECT_EQ(results["compile_warnings"]["texts"][0], "warning: " + kEvil);
  EXPECT_EQ(bytes_of(results["compile_warnings"]["result"]), (std::vector<unsigned char>{1}));
  EXPECT_EQ(bytes_of(results["compile_warnings"]["text"]), (std::vector<unsigned char>{0}));
  EXPECT_EQ(results["throttle_reasons"]["texts"], nlohmann::json::array({"sw_power_cap"}));
  // The page's flags area: throttled and remeasured results, the SM clocks seen.
  EXPECT_EQ(data["throttled"], 1);
  EXPECT_EQ(data["remeasured"], 1);
  EXPECT_EQ(data["sm_clock_mhz"]["min"], 1500.0);
  EXPECT_EQ(data["sm_clock_mhz"]["max"], 1980.0);
  // The warning's text stays text.
  const std::string page = report::render_html(data);
  EXPECT_EQ(count(page, "<img"), 0u);
  EXPECT_EQ(page.find(kEvil), std::string::npos);
  EXPECT_EQ(data_block(page)["results"]["compile_warnings"]["texts"][0], "warning: " + kEvil);
}

// Warnings that differ per config could fill the page: past 200 different texts they share one.
TEST(Report, TextObservationsKeepAtMostTwoHundredDifferentTexts) {
  Observed o;
  {
    db::Store store(o.path);
    for (int i = 0; i < 205; ++i) {
      db::ResultRecord r;
      r.run_id = 1;
      r.device_id = o.device;
      r.template_id = 1;
      r.problem_id = 1;
      r.config = "block=" + std::to_string(10000 + i);
      r.config_json = R"({"block":)" + std::to_string(10000 + i) + "}";
      r.status = "ok";
      r.time_ms_median = 5;
      r.launch_json = "[]";
      r.observations.compile_warnings = "warning " + std::to_string(i);
      store.add_result(r);
    }
  }
  sql::Database db(o.path, sql::Database::Mode::read_only);
  const auto warnings = report::collect(db, {o.device, "scan", std::nullopt})["results"]["compile_warnings"];
  ASSERT_EQ(warnings["texts"].size(), 201u);  // the hostile one, 199 others, and the shared note
  EXPECT_NE(warnings["texts"][200].get<std::string>().find("not kept"), std::string::npos);
}

// Values that recur (registers, occupancies, clocks) travel once, with an index per result.
TEST(Report, RecurringValuesTravelAsTheirDistinctValuesAndAnIndex) {
  Observed o;
  {
    db::Store store(o.path);
    for (int i = 0; i < 100; ++i) {
      db::ResultRecord r;
      r.run_id = 1;
      r.device_id = o.device;
      r.template_id = 1;
      r.problem_id = 1;
      r.config = "block=" + std::to_string(10000 + i);
      r.config_json = R"({"block":)" + std::to_string(10000 + i) + "}";
      r.status = "ok";
      r.time_ms_median = 5 + i;
      r.launch_json = "[]";
      r.observations.registers = i % 2 ? 40 : 64;
      store.add_result(r);
    }
  }
  sql::Database db(o.path, sql::Database::Mode::read_only);
  const auto results = report::collect(db, {o.device, "scan", std::nullopt})["results"];
  // In storage order: 32, 255, none, none (the failure), then 64, 40, 64, ...
  EXPECT_EQ(results["registers"]["values"], nlohmann::json::array({32.0, 255.0, 64.0, 40.0}));
  const auto index = bytes_of(results["registers"]);
  ASSERT_EQ(index.size(), 104u);
  EXPECT_EQ((std::vector<unsigned char>(index.begin(), index.begin() + 6)),
            (std::vector<unsigned char>{1, 2, 0, 0, 3, 4}));
  EXPECT_FALSE(results["registers"].contains("at"));
  EXPECT_EQ(results["median"]["type"], "f32");  // times are all different: float32 values
  // Energy, measured for one result of 104: that result's value and its index.
  EXPECT_EQ(bytes_of(results["energy_j"]["at"]), (std::vector<unsigned char>{0}));
  EXPECT_FLOAT_EQ(floats(results["energy_j"], 104)[0], 0.002f);
  EXPECT_TRUE(std::isnan(floats(results["energy_j"], 104)[50]));
}

// Reports read databases as they are: a file older than version 8 has no observation columns.
TEST(Report, ADatabaseOlderThanVersion8ReportsNoObservations) {
  cutune::testing::TempFolder folder{"cutune-report-v7"};
  const std::string path = folder.file("v7.db");
  {
    sql::Database raw(path, sql::Database::Mode::read_write_create);
    db::migrate_to(raw, 7);
    raw.exec(R"sql(
      INSERT INTO devices (id, name, uuid, cc_major, cc_minor, sm_count, memory_bytes, l2_bytes, memory_clock_khz,
                           bus_width_bits, theoretical_bandwidth_gbs, driver_version, nvrtc_version)
        VALUES (1, 'H100', 'GPU-v7', 9, 0, 132, 1, 1, 1, 1, 1, 13000, '13.0');
      INSERT INTO templates (id, family, source_hash, source, created_at) VALUES (1, 'scan', 'h', 's', '2026-11-25');
      INSERT INTO problems (id, family, key, size, dtype, descriptor, match_key)
        VALUES (1, 'scan', 'n=1024,type=int32', 1024, 'int32', '{"n":1024,"type":"int32"}', 'type=int32');
      INSERT INTO runs (id, family, device_id, template_id, strategy, seed, budget, command, tool_version, started_at,
                        finished_at, status)
        VALUES (1, 'scan', 1, 1, 'brute_force', 1, '', '', 'cutune 0.1.0', '2026-11-25', '2026-11-25', 'finished');
      INSERT INTO results (run_id, device_id, template_id, problem_id, config, config_json, status, time_ms_median,
                           samples, compile_s, verify_s, benchmark_s, error, launch_json, created_at, elapsed_s)
        VALUES (1, 1, 1, 1, 'algo=warp', '{"algo":"warp"}', 'ok', 0.5, 10, 0, 0, 0, '', '[]', '2026-11-25', 1),
               (1, 1, 1, 1, 'algo=blelloch', '{"algo":"blelloch"}', 'ok', 0.7, 10, 0, 0, 0, '', '[]', '2026-11-25', 2);
    )sql");
  }
  sql::Database db(path, sql::Database::Mode::read_only);
  ASSERT_EQ(db::schema_version(db), 7);
  const auto data = report::collect(db, {1, "scan", std::nullopt});
  EXPECT_EQ(data["results"]["count"], 2);
  for (const db::ObservationField& field : db::kObservationFields)
    EXPECT_FALSE(data["results"].contains(field.name)) << field.name;
  EXPECT_EQ(bytes_of(data["results"]["flags"]), (std::vector<unsigned char>{0, 0}));
  EXPECT_EQ(data["throttled"], 0);
  EXPECT_EQ(data["remeasured"], 0);
  EXPECT_TRUE(data["sm_clock_mhz"].is_null());
}

TEST(Report, ConfigTextThatValuesDoNotRebuildIsKept) {
  Landscape l;
  {
    db::Store store(l.path);
    const auto tmpl = store.upsert_template("scan", "h", "s");
    const auto problem = store.upsert_problem({0, "scan", "n=1000", 1000, "int32", "{}"});
    db::ResultRecord r;
    r.run_id = l.run_h100;
    r.device_id = l.h100;
    r.template_id = tmpl;
    r.problem_id = problem;
    r.config = "algo=warp,block=64,scale=0.5";
    r.config_json = R"({"algo":"warp","block":64,"scale":0.5})";  // a float prints differently in JavaScript
    r.status = "ok";
    r.time_ms_median = 3;
    r.launch_json = "[]";
    store.add_result(r);
  }
  sql::Database db(l.path, sql::Database::Mode::read_only);
  const auto data = report::collect(db, {l.h100, "scan", std::nullopt});
  ASSERT_EQ(data["configs"]["keys"].size(), 1u) << data["configs"]["keys"].dump();
  EXPECT_EQ(data["configs"]["keys"].begin().value(), "algo=warp,block=64,scale=0.5");
}

TEST(Report, FileNamesAreTame) {
  Fixture f;
  sql::Database db(f.path, sql::Database::Mode::read_only);
  const auto path = report::write_report(db, {f.device, kEvil, std::nullopt}, (f.folder / "out").string());
  const std::string name = std::filesystem::path(path).filename().string();
  for (char c : name) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.') << name;
  EXPECT_TRUE(std::filesystem::exists(path));
}

TEST(Report, SelectionsCoverEveryDeviceAndFamily) {
  Fixture f;
  sql::Database db(f.path, sql::Database::Mode::read_only);
  const auto selections = report::all_selections(db);
  ASSERT_EQ(selections.size(), 1u);
  EXPECT_EQ(selections[0].family, kEvil);
}

TEST(Report, DevicesKnownByNameShowNothingAsZero) {
  Landscape l;
  sql::Database db(l.path, sql::Database::Mode::read_only);
  const auto named = report::collect(db, {l.named, "scan", std::nullopt})["device"];
  EXPECT_TRUE(named["known_by_name_only"].get<bool>());
  for (const char* field :
       {"compute_capability", "sm_count", "memory_bytes", "l2_bytes", "memory_clock_khz", "bus_width_bits",
        "theoretical_bandwidth_gbs", "driver_version", "nvrtc_version", "copy_bandwidth_gbs"})
    EXPECT_TRUE(named[field].is_null()) << field << ": " << named[field];
  const auto h100 = report::collect(db, {l.h100, "scan", std::nullopt})["device"];
  EXPECT_FALSE(h100["known_by_name_only"].get<bool>());
  EXPECT_EQ(h100["compute_capability"], "9.0");
  EXPECT_EQ(h100["memory_clock_khz"], 2'619'000);
  EXPECT_EQ(h100["copy_bandwidth_gbs"], 3000.0);
  EXPECT_TRUE(h100["sm_count"].is_null());  // zero in the fixture: unknown, not 0
}

TEST(Report, EachRunSaysHowItWasMeasuredAndFlagsSourceAnomalies) {
  Landscape l;
  sql::Database db(l.path, sql::Database::Mode::read_only);
  const auto imported = report::collect(db, {l.named, "scan", std::nullopt});
  ASSERT_EQ(imported["runs"].size(), 2u);
  const auto& kt = imported["runs"][0];
  const auto& t4 = imported["runs"][1];
  EXPECT_EQ(kt["provenance"]["source"], "kernel_tuner");
  EXPECT_NE(kt["provenance"]["method"].get<std::string>().find("Kernel Tuner"), std::string::npos);
  EXPECT_EQ(kt["provenance"]["method"].get<std::string>().find("L2 cache overwritten"), std::string::npos);
  ASSERT_EQ(kt["anomalies"].size(), 1u);
  EXPECT_EQ(kt["anomalies"][0]["kind"], "time_outside_range");
  EXPECT_EQ(kt["anomalies"][0]["count"], 1);
  EXPECT_EQ(kt["anomalies"][0]["examples"][0]["config"], "algo=warp,block=128");
  EXPECT_EQ(t4["provenance"]["source"], "t4");
  ASSERT_EQ(t4["anomalies"].size(), 1u);
  EXPECT_EQ(t4["anomalies"][0]["kind"], "no_samples");
  // The anomalous result is flagged for the results table (bit 4).
  EXPECT_EQ(base64_bytes(imported["results"]["flags"]["data"])[0] & 4, 4);

  const auto own = report::collect(db, {l.h100, "scan", std::nullopt});
  EXPECT_EQ(own["runs"][0]["provenance"]["source"], "cutune");
  EXPECT_NE(own["runs"][0]["provenance"]["method"].get<std::string>().find("L2 cache overwritten"), std::string::npos);
  EXPECT_TRUE(own["runs"][0]["anomalies"].empty());
}

TEST(Report, IndexLinksEveryReportAndSetsDevicesSideBySide) {
  Landscape l;
  sql::Database db(l.path, sql::Database::Mode::read_only);
  const auto selections = report::all_selections(db);
  const auto index = report::collect_index(db, selections, "l.db");
  EXPECT_EQ(index["kind"], "index");
  ASSERT_EQ(index["reports"].size(), 3u);
  for (std::size_t k = 0; k < selections.size(); ++k) {
    const auto data = report::collect(db, selections[k]);
    EXPECT_EQ(index["reports"][k]["file"], report::file_name(data, selections[k]));
  }
  EXPECT_EQ(index["reports"][2]["anomalies"], 1);
  EXPECT_EQ(index["reports"][2]["sources"].size(), 2u);  // Kernel Tuner and T4
  ASSERT_EQ(index["families"].size(), 1u);
  const auto& scan = index["families"][0];
  ASSERT_EQ(scan["problems"].size(), 3u);  // in size order
  EXPECT_EQ(scan["problems"][0]["key"], "n=7");
  const auto& large = scan["problems"][2];
  EXPECT_EQ(large["key"], "n=1000000");
  ASSERT_EQ(large["best"].size(), 3u);
  EXPECT_EQ(large["best"][0]["ms"], 10.0);
  EXPECT_EQ(large["best"][0]["config"], "algo=warp,block=256");
  EXPECT_NEAR(large["best"][0]["copy"].get<double>(), 10.0 / 3000, 1e-12);
  EXPECT_EQ(large["best"][1]["ms"], 15.0);
  ASSERT_EQ(scan["baselines"].size(), 1u);
  EXPECT_EQ(scan["baselines"][0]["library"], "CUB");

  const std::string page = report::render_html(index);
  EXPECT_EQ(count(page, "<img"), 0u);
  EXPECT_EQ(page.find(kEvil), std::string::npos);
  const auto path = report::write_index(db, selections, "l.db", (l.folder / "out").string());
  EXPECT_EQ(std::filesystem::path(path).filename(), "index.html");
}

TEST(Report, SidesAreRunsOrDevicesByUuidPrefixOrName) {
  Landscape l;
  sql::Database db(l.path, sql::Database::Mode::read_only);
  const auto run = report::resolve_side(db, std::to_string(l.run_a100));
  EXPECT_EQ(run.device_id, l.a100);
  EXPECT_EQ(run.run_id, l.run_a100);
  EXPECT_EQ(report::resolve_side(db, "GPU-h100").device_id, l.h100);
  EXPECT_FALSE(report::resolve_side(db, "GPU-h100").run_id.has_value());
  EXPECT_EQ(report::resolve_side(db, "GPU-a").device_id, l.a100);
  EXPECT_EQ(report::resolve_side(db, "A100").device_id, l.a100);
  EXPECT_THROW(report::resolve_side(db, "GPU-"), report::BadSelection);  // two devices
  EXPECT_THROW(report::resolve_side(db, "999"), report::BadSelection);
  EXPECT_THROW(report::resolve_side(db, "99999999999999999999999"), report::BadSelection);
  EXPECT_THROW(report::resolve_side(db, "nosuch"), report::BadSelection);
  EXPECT_THROW(report::resolve_side(db, ""), report::BadSelection);
}

TEST(Report, ComparisonSetsSharedProblemsSideBySide) {
  Landscape l;
  sql::Database db(l.path, sql::Database::Mode::read_only);
  const report::Comparison devices{report::resolve_side(db, "GPU-h100"), report::resolve_side(db, "GPU-a100"),
                                   std::nullopt};
  const auto data = report::collect_comparison(db, devices);
  ASSERT_EQ(data["families"].size(), 1u);
  const auto& problems = data["families"][0]["problems"];
  ASSERT_EQ(problems.size(), 2u);  // n=7 only on the H100
  EXPECT_EQ(problems[0]["key"], "n=1000");
  EXPECT_EQ(problems[0]["a"]["config"], problems[0]["b"]["config"]);
  const auto& large = problems[1];
  EXPECT_EQ(large["a"]["ms"], 10.0);
  EXPECT_EQ(large["b"]["ms"], 15.0);
  EXPECT_EQ(large["a"]["values"]["block"], 256);
  EXPECT_EQ(large["b"]["values"]["block"], 512);
  EXPECT_EQ(large["a_config_on_b"], 30.0);  // the H100's best (block 256) as the A100 measured it
  EXPECT_EQ(large["b_config_on_a"], 20.0);
  ASSERT_EQ(data["only_a"].size(), 1u);
  EXPECT_EQ(data["only_a"][0]["key"], "n=7");
  EXPECT_EQ(data["sides"][0]["runs"][0]["provenance"]["source"], "cutune");

  const report::Comparison runs{report::resolve_side(db, std::to_string(l.run_h100)),
                                report::resolve_side(db, std::to_string(l.run_kt)), std::nullopt};
  const auto by_run = report::collect_comparison(db, runs);
  EXPECT_EQ(by_run["families"][0]["problems"].size(), 1u);
  EXPECT_EQ(by_run["sides"][1]["runs"][0]["provenance"]["source"], "kernel_tuner");
  const std::string page = report::render_html(by_run);
  EXPECT_EQ(count(page, "<img"), 0u);
  EXPECT_EQ(page.find(kEvil), std::string::npos);
  const auto path = report::write_comparison(db, runs, (l.folder / "out").string());
  EXPECT_EQ(std::filesystem::path(path).filename(),
            "compare-run-" + std::to_string(l.run_h100) + "-vs-run-" + std::to_string(l.run_kt) + ".html");
}

TEST(Report, ComparisonRefusesMismatchedSides) {
  Landscape l;
  sql::Database db(l.path, sql::Database::Mode::read_only);
  const auto h100 = report::resolve_side(db, "GPU-h100");
  const auto run = report::resolve_side(db, std::to_string(l.run_a100));
  EXPECT_THROW(report::collect_comparison(db, {h100, run, std::nullopt}), report::BadSelection);
  EXPECT_THROW(report::collect_comparison(db, {h100, h100, std::nullopt}), report::BadSelection);
  EXPECT_THROW(report::collect_comparison(db, {run, run, std::nullopt}), report::BadSelection);
  EXPECT_THROW(report::collect_comparison(db, {h100, report::resolve_side(db, "GPU-a100"), std::string("reduce")}),
               report::BadSelection);
  try {
    report::collect_comparison(db, {report::resolve_side(db, std::to_string(l.run_t4)),
                                    report::resolve_side(db, std::to_string(l.run_kt)), std::nullopt});
    FAIL() << "runs of different problems compared";
  } catch (const report::BadSelection& e) {
    EXPECT_NE(std::string(e.what()).find("share no problem"), std::string::npos) << e.what();
  }
}

TEST(Report, ReportsWrittenWithTheIndexLinkBackToIt) {
  Fixture f;
  sql::Database db(f.path, sql::Database::Mode::read_only);
  const std::string folder = (f.folder / "out").string();
  const auto read = [](const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const auto linked = data_block(read(report::write_report(db, {f.device, kEvil, std::nullopt}, folder, true)));
  EXPECT_EQ(linked["index_file"], "index.html");
  const auto alone = data_block(read(report::write_report(db, {f.device, kEvil, std::nullopt}, folder)));
  EXPECT_FALSE(alone.contains("index_file"));
}

// What the index that `tune` writes after a run links: the reports already in the folder, no more.
TEST(Report, SelectionsWithReportsAreThoseWhoseReportIsInTheFolder) {
  Landscape l;
  sql::Database db(l.path, sql::Database::Mode::read_only);
  const std::string folder = (l.folder / "reports").string();
  const auto selections = report::all_selections(db);
  ASSERT_EQ(selections.size(), 3u);
  EXPECT_TRUE(report::selections_with_reports(db, folder).empty());
  report::write_report(db, selections[2], folder, true);
  report::write_report(db, selections[0], folder, true);
  const auto found = report::selections_with_reports(db, folder);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].device_id, selections[0].device_id);
  EXPECT_EQ(found[0].family, selections[0].family);
  EXPECT_EQ(found[1].device_id, selections[2].device_id);
  EXPECT_EQ(found[1].family, selections[2].family);
  // Run reports ("run-…") are not (device, family) reports.
  report::write_report(db, {selections[1].device_id, selections[1].family, l.run_a100}, folder);
  EXPECT_EQ(report::selections_with_reports(db, folder).size(), 2u);
}
