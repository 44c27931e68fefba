// The lookup's lowest-energy objective (issue 20): the least energy within a time window of the
// fastest, on the problem and device the fastest lookup finds; the fastest, with a note saying
// why, where nothing can be compared; and energy and power on every answer that has them.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "lookup.hpp"
#include "results_fixture.hpp"
#include "schema.hpp"

using namespace cutune;
using cutune::lookup::Level;
using cutune::lookup::Objective;
using cutune::testing::ResultsBuilder;
using cutune::testing::TempFolder;

namespace {

const std::string kFastest = "algo=lookback,block=256,ept=8,vec=4,pad=1";
const std::string kFrugal = "algo=warp,block=128,ept=4,vec=4,pad=0";
const std::string kThrifty = "algo=warp,block=256,ept=4,vec=4,pad=0";
const std::string kMiser = "algo=blelloch,block=64,ept=1,vec=1,pad=0";
const std::string kUnmeasured = "algo=lookback,block=128,ept=8,vec=4,pad=1";

// An H100 and an A100. On the H100 at n = 4096: the fastest (1.00 ms, 10 J); two at 7 J, 3 % and
// 4 % slower (the faster of them wins the tie); one at 2 J but 30 % slower; one 1 % slower whose
// energy was not measured. At n = 65536 nothing has an energy. At n = 16384 the fastest has no
// energy, the next (2.5 % slower) has. The A100's results have no energy either.
struct EnergyResults {
  TempFolder folder;
  std::string path = folder.file("energy.db");
  std::int64_t h100 = 0, a100 = 0;
  lookup::Query h100_query(std::int64_t n) const { return {"scan", {"GPU-h100", "NVIDIA H100", 9, 0}, {n, "int32"}}; }

  EnergyResults() {
    db::Store store(path);
    ResultsBuilder b(store);
    h100 = b.device("GPU-h100", "NVIDIA H100", 9, 0);
    a100 = b.device("GPU-a100", "NVIDIA A100", 8, 0);
    b.with_energy(h100, "scan", 4096, "int32", kFastest, 1.00, 10.0, 700);
    b.with_energy(h100, "scan", 4096, "int32", kThrifty, 1.04, 7.0, 520);
    b.with_energy(h100, "scan", 4096, "int32", kFrugal, 1.03, 7.0, 540);
    b.with_energy(h100, "scan", 4096, "int32", kMiser, 1.30, 2.0, 150);
    b.with_energy(h100, "scan", 4096, "int32", kUnmeasured, 1.01, std::nullopt);
    b.result(h100, "scan", 4096, "int32", "algo=warp,block=32,ept=1,vec=1,pad=0", std::nullopt, "compile_error");
    b.result(h100, "scan", 65536, "int32", kFastest, 5.0);
    b.result(h100, "scan", 65536, "int32", kFrugal, 5.1);
    b.result(h100, "scan", 16384, "int32", kFastest, 2.0);
    b.with_energy(h100, "scan", 16384, "int32", kFrugal, 2.05, 3.0, 300);
    b.result(a100, "scan", 4096, "int32", kFrugal, 3.0);
    store.refresh_family_defaults();
  }
};

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST(LookupEnergy, TheLeastEnergyWithinTheWindowWinsAndTiesGoToTheFaster) {
  EnergyResults r;
  lookup::Database results(r.path);
  const auto m = results.find(r.h100_query(4096), Objective::lowest_energy(0.05));
  EXPECT_EQ(m->config, kFrugal);  // 7 J like kThrifty, and faster
  EXPECT_EQ(m->chosen_by, Objective::Kind::lowest_energy);
  EXPECT_EQ(m->energy_j, 7.0);
  EXPECT_EQ(m->power_w, 540.0);
  EXPECT_DOUBLE_EQ(*m->time_ms, 1.03);
  EXPECT_DOUBLE_EQ(*m->fastest_time_ms, 1.0);
  EXPECT_EQ(m->objective_note, "");
  // Found as the fastest was: the same level, basis, problem and device.
  EXPECT_EQ(m->level, Level::exact_device);
  EXPECT_EQ(m->basis, "device GPU-h100");
  EXPECT_EQ(m->matched_problem, "n=4096,type=int32");
  EXPECT_EQ(m->device_uuid, "GPU-h100");
  EXPECT_EQ(m->size_distance, 0);
  EXPECT_EQ(m->integer("block"), 128);
  ASSERT_EQ(m->launches.size(), 1u);
  EXPECT_NE(m->result_id, results.find(r.h100_query(4096))->result_id);
}

TEST(LookupEnergy, TheWindowDecidesWhatMayCompete) {
  EnergyResults r;
  lookup::Database results(r.path);
  const auto q = r.h100_query(4096);
  // 30 % slower is outside 5 % and inside 50 %.
  EXPECT_EQ(results.find(q, Objective::lowest_energy(0.5))->config, kMiser);
  EXPECT_EQ(results.find(q, Objective::lowest_energy(0.31))->config, kMiser);
  EXPECT_EQ(results.find(q, Objective::lowest_energy(0.29))->config, kFrugal);
  // Only what is at most 2 % slower: the fastest, and one without an energy, which never wins.
  const auto narrow = results.find(q, Objective::lowest_energy(0.02));
  EXPECT_EQ(narrow->config, kFastest);
  EXPECT_EQ(narrow->chosen_by, Objective::Kind::lowest_energy);
  EXPECT_EQ(narrow->energy_j, 10.0);
  // A window of 0: the fastest, its energy compared with nothing but itself.
  EXPECT_EQ(results.find(q, Objective::lowest_energy(0))->config, kFastest);
}

TEST(LookupEnergy, FastestAnswersCarryTheirEnergyAndAreUnchanged) {
  EnergyResults r;
  lookup::Database results(r.path);
  const auto m = results.find(r.h100_query(4096));
  EXPECT_EQ(m->config, kFastest);
  EXPECT_EQ(m->energy_j, 10.0);
  EXPECT_EQ(m->power_w, 700.0);
  EXPECT_EQ(m->chosen_by, Objective::Kind::fastest);
  EXPECT_FALSE(m->fastest_time_ms);
  EXPECT_EQ(m->objective_note, "");
  EXPECT_EQ(results.find(r.h100_query(4096), Objective::fastest()), m) << "the same cached answer";
  const auto unmeasured = results.find(r.h100_query(65536));
  EXPECT_FALSE(unmeasured->energy_j);
  EXPECT_FALSE(unmeasured->power_w);
}

TEST(LookupEnergy, WithoutAnEnergyInTheWindowTheFastestAnswersAndSaysWhy) {
  EnergyResults r;
  lookup::Database results(r.path);
  const auto m = results.find(r.h100_query(65536), Objective::lowest_energy(0.05));
  EXPECT_EQ(m->config, kFastest);
  EXPECT_EQ(m->chosen_by, Objective::Kind::fastest);
  EXPECT_FALSE(m->energy_j);
  EXPECT_FALSE(m->fastest_time_ms);
  EXPECT_TRUE(has(m->objective_note,
                  "no result of n=65536,type=int32 on GPU-h100 within 5 % of the fastest has a measured "
                  "energy"))
      << m->objective_note;
  EXPECT_TRUE(has(m->objective_note, "answered with the fastest config")) << m->objective_note;
  // The fastest without an energy loses to one that has, within the window.
  const auto next = results.find(r.h100_query(16384), Objective::lowest_energy(0.05));
  EXPECT_EQ(next->config, kFrugal);
  EXPECT_EQ(next->chosen_by, Objective::Kind::lowest_energy);
  EXPECT_EQ(next->energy_j, 3.0);
  // Outside a 1 % window it does not.
  const auto narrow = results.find(r.h100_query(16384), Objective::lowest_energy(0.01));
  EXPECT_EQ(narrow->config, kFastest);
  EXPECT_FALSE(narrow->objective_note.empty());
}

TEST(LookupEnergy, EqualEnergyAndTimeGoToTheSmallerConfigText) {
  TempFolder folder;
  const std::string path = folder.file("ties.db");
  {
    db::Store store(path);
    ResultsBuilder b(store);
    const auto gpu = b.device("GPU-t", "Tie GPU", 9, 0);
    b.with_energy(gpu, "scan", 4096, "int32", kFastest, 1.0, 5.0);
    b.with_energy(gpu, "scan", 4096, "int32", kThrifty, 1.02, 4.0);
    b.with_energy(gpu, "scan", 4096, "int32", kFrugal, 1.02, 4.0);
  }
  lookup::Database results(path);
  const auto m = results.find({"scan", {"GPU-t", "", 9, 0}, {4096, "int32"}}, Objective::lowest_energy(0.05));
  EXPECT_EQ(m->config, std::min(kFrugal, kThrifty));
}

TEST(LookupEnergy, SameComputeCapabilityComparesOnTheDeviceThatMeasuredTheFastest) {
  EnergyResults r;
  lookup::Database results(r.path);
  const lookup::Query other{"scan", {"GPU-unknown", "Unknown GPU", 9, 0}, {4096, "int32"}};
  const auto m = results.find(other, Objective::lowest_energy(0.05));
  EXPECT_EQ(m->level, Level::same_compute_capability);
  EXPECT_EQ(m->basis, "compute capability 9.0");
  EXPECT_EQ(m->config, kFrugal);
  EXPECT_EQ(m->device_uuid, "GPU-h100");
  // The A100 measured no energy.
  const auto a100 = results.find({"scan", {"GPU-a100", "", 8, 0}, {4096, "int32"}}, Objective::lowest_energy(0.05));
  EXPECT_EQ(a100->config, kFrugal);
  EXPECT_EQ(a100->chosen_by, Objective::Kind::fastest);
  EXPECT_TRUE(has(a100->objective_note, "on GPU-a100")) << a100->objective_note;
}

TEST(LookupEnergy, FamilyDefaultsAndBuiltinDefaultsAnswerAsTheFastestWithANote) {
  EnergyResults r;
  lookup::Database results(r.path);
  const auto family = results.find({"scan", {"GPU-x", "X", 7, 5}, {4096, "int32"}}, Objective::lowest_energy(0.05));
  EXPECT_EQ(family->level, Level::family_default);
  EXPECT_EQ(family->config, results.find({"scan", {"GPU-x", "X", 7, 5}, {4096, "int32"}})->config);
  EXPECT_EQ(family->chosen_by, Objective::Kind::fastest);
  EXPECT_TRUE(has(family->objective_note, "family default")) << family->objective_note;
  const auto builtin = results.find({"scan", {"GPU-h100", "", 9, 0}, {4096, "int64"}}, Objective::lowest_energy(0.05));
  EXPECT_EQ(builtin->level, Level::builtin_default);
  EXPECT_TRUE(std::isinf(builtin->size_distance));
  EXPECT_TRUE(has(builtin->objective_note, "built-in default")) << builtin->objective_note;
}

TEST(LookupEnergy, AnotherSizeKeepsItsOwnDistance) {
  EnergyResults r;
  lookup::Database results(r.path);
  for (std::int64_t n : {5000, 3000, 4096, 5000}) {
    const auto fastest = results.find(r.h100_query(n));
    const auto m = results.find(r.h100_query(n), Objective::lowest_energy(0.05));
    EXPECT_EQ(m->config, kFrugal) << n;
    EXPECT_EQ(m->matched_size, 4096) << n;
    EXPECT_DOUBLE_EQ(m->size_distance, fastest->size_distance) << n;
    EXPECT_DOUBLE_EQ(m->size_distance, std::abs(std::log(static_cast<double>(n)) - std::log(4096.0))) << n;
  }
}

TEST(LookupEnergy, AWindowThatIsNoFractionIsAnError) {
  EnergyResults r;
  lookup::Database results(r.path);
  for (double bad : {-0.05, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    try {
      results.find(r.h100_query(4096), Objective::lowest_energy(bad));
      FAIL() << "accepted a window of " << bad;
    } catch (const lookup::Error& e) {
      EXPECT_TRUE(has(e.what(), "window")) << e.what();
    }
  }
  // A bad query is refused as the fastest lookup refuses it.
  EXPECT_THROW(results.find({"", {}, {4096, "int32"}}, Objective::lowest_energy(0.05)), lookup::Error);
}

// A database from before energy was stored is read as it is: the fastest, and why.
TEST(LookupEnergy, AVersion7DatabaseHasNoEnergyToCompare) {
  TempFolder folder;
  const std::string path = folder.file("v7.db");
  cutune::testing::create_version_1_database(path);
  {
    sql::Database raw(path, sql::Database::Mode::read_write_create);
    db::migrate_to(raw, 7);
  }
  lookup::Database results(path);
  const lookup::Query q{"scan", {"GPU-old", "", 8, 0}, {1024, "int32"}};
  const auto fastest = results.find(q);
  EXPECT_EQ(fastest->config, "algo=warp");
  EXPECT_FALSE(fastest->energy_j);
  const auto m = results.find(q, Objective::lowest_energy(0.05));
  EXPECT_EQ(m->config, "algo=warp");
  EXPECT_EQ(m->chosen_by, Objective::Kind::fastest);
  EXPECT_TRUE(has(m->objective_note, "schema version 7")) << m->objective_note;
  sql::Database raw(path, sql::Database::Mode::read_only);
  EXPECT_EQ(db::schema_version(raw), 7) << "a lookup changed the file";
}

TEST(LookupEnergy, TheCubinIsTheChosenConfigs) {
  EnergyResults r;
  {
    db::Store store(r.path);
    ResultsBuilder b(store);
    const auto tmpl = b.template_of("scan");
    const auto problem = b.problem("scan", 4096, "int32");
    for (const auto& [config, tag] : {std::pair{kFastest, 1}, {kFrugal, 2}})
      store.put_cubin({0,
                       "sm_90",
                       tmpl,
                       problem,
                       config,
                       {0x7f, 'E', 'L', 'F', static_cast<unsigned char>(tag)},
                       "[]",
                       "[]",
                       "13.0",
                       ""});
  }
  lookup::Database results(r.path);
  const auto frugal = results.cubin(r.h100_query(4096), "sm_90", Objective::lowest_energy(0.05));
  ASSERT_TRUE(frugal) << frugal.reason;
  EXPECT_EQ(frugal.image.back(), 2);
  const auto fastest = results.cubin(r.h100_query(4096), "sm_90");
  ASSERT_TRUE(fastest) << fastest.reason;
  EXPECT_EQ(fastest.image.back(), 1);
  // A config whose cubin was not stored (here: none but these two) has none to give.
  const auto miser = results.cubin(r.h100_query(4096), "sm_90", Objective::lowest_energy(0.5));
  EXPECT_FALSE(miser);
  EXPECT_TRUE(has(miser.reason, kMiser)) << miser.reason;
}

TEST(LookupEnergy, AnswersAreCachedUntilCleared) {
  EnergyResults r;
  lookup::Database results(r.path);
  const auto before = results.find(r.h100_query(65536), Objective::lowest_energy(0.05));
  EXPECT_EQ(before->chosen_by, Objective::Kind::fastest);
  EXPECT_EQ(results.find(r.h100_query(65536), Objective::lowest_energy(0.05)), before);
  {
    db::Store store(r.path);
    ResultsBuilder b(store);
    b.with_energy(r.h100, "scan", 65536, "int32", kFrugal, 5.1, 30.0);
  }
  EXPECT_EQ(results.find(r.h100_query(65536), Objective::lowest_energy(0.05)), before);
  results.clear_cache();
  const auto after = results.find(r.h100_query(65536), Objective::lowest_energy(0.05));
  EXPECT_EQ(after->config, kFrugal);
  EXPECT_EQ(after->chosen_by, Objective::Kind::lowest_energy);
}

TEST(LookupEnergy, ObjectivesHaveNames) {
  EXPECT_STREQ(lookup::to_string(Objective::Kind::fastest), "fastest");
  EXPECT_STREQ(lookup::to_string(Objective::Kind::lowest_energy), "lowest_energy");
  EXPECT_EQ(Objective::fastest().kind, Objective::Kind::fastest);
  EXPECT_EQ(Objective::lowest_energy(0.1).within_fraction, 0.1);
}
