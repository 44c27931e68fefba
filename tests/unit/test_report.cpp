// Report generation without a browser: hostile strings stay inert, the data block round-trips,
// and the page is complete and self-contained.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "report.hpp"
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
  const std::string page = report::render_html(data);
  const std::string open = R"(<script id="report-data" type="application/json">)";
  const auto begin = page.find(open) + open.size();
  const auto end = page.find("</script>", begin);
  const auto parsed = nlohmann::json::parse(page.substr(begin, end - begin));
  EXPECT_EQ(parsed["family"], kEvil);
  EXPECT_EQ(parsed["parameters"][0], kEvil);
  EXPECT_EQ(parsed["results"]["median"].size(), 3u);
  EXPECT_EQ(parsed["failures"][0]["status"], "compile_error");
  EXPECT_EQ(parsed["failures"][0]["messages"][0]["text"], kEvil);
  // The page says how many ok results were never checked against a reference.
  EXPECT_EQ(parsed["unverified"], 1);
  EXPECT_NE(page.find("id=\"unverified-warning\""), std::string::npos);
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
