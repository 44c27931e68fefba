// The lookup library: every fallback level, nearest-size selection, parameters and launches,
// the cache, the schema checks, cubins with the architecture check, and readers beside a writer.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <thread>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "family.hpp"
#include "config_choice.hpp"
#include "lookup.hpp"
#include "results_fixture.hpp"
#include "schema.hpp"

using namespace cutune;
using cutune::lookup::Level;
using cutune::testing::ResultsBuilder;
using cutune::testing::TempFolder;

namespace {

constexpr std::int64_t kSmall = 1024, kLarge = 1 << 20;
const std::string kFast = "algo=lookback,block=256,ept=8,vec=4,pad=1";
const std::string kSteady = "algo=warp,block=128,ept=4,vec=4,pad=0";
const std::string kSpiky = "algo=blelloch,block=512,ept=2,vec=2,pad=1";
const std::string kLucky = "algo=warp,block=64,ept=1,vec=1,pad=0";

// Two H100s (same name, different UUIDs) and an A100. On the pairs (h100a, small), (h100a, large)
// and (a100, large): kSteady is within 10 % of the best everywhere; kSpiky is the best on two
// pairs and 2× slower on the third (geometric mean 1.26); kLucky was measured once, and won there.
struct ScanResults {
  TempFolder folder;
  std::string path = folder.file("results.db");
  std::int64_t h100a = 0, h100b = 0, a100 = 0;

  ScanResults() {
    db::Store store(path);
    ResultsBuilder b(store);
    h100a = b.device("GPU-h100-a", "NVIDIA H100", 9, 0);
    h100b = b.device("GPU-h100-b", "NVIDIA H100", 9, 0);
    a100 = b.device("GPU-a100", "NVIDIA A100", 8, 0);
    b.result(h100a, "scan", kSmall, "int32", kSpiky, 1.0);
    b.result(h100a, "scan", kSmall, "int32", kSteady, 1.1);
    b.result(h100a, "scan", kLarge, "int32", kSpiky, 4.0);
    b.result(h100a, "scan", kLarge, "int32", kSteady, 4.4);
    b.result(h100a, "scan", kLarge, "int32", kFast, std::nullopt, "wrong_result");
    b.result(a100, "scan", kLarge, "int32", kSpiky, 20.0);
    b.result(a100, "scan", kLarge, "int32", kSteady, 11.0);
    b.result(a100, "scan", kLarge, "int32", kLucky, 10.0);
    b.result(h100b, "scan", kSmall, "int64", kLucky, 3.0);
  }
};

lookup::Query query(const std::string& uuid, const std::string& name, int cc_major, int cc_minor, std::int64_t n,
                    const std::string& dtype = "int32") {
  return {"scan", {uuid, name, cc_major, cc_minor}, {n, dtype}};
}

}  // namespace

TEST(Lookup, ExactDeviceByUuid) {
  ScanResults db;
  lookup::Database results(db.path);
  const auto m = results.find(query("GPU-h100-a", "", 0, 0, kLarge));
  EXPECT_EQ(m->level, Level::exact_device);
  EXPECT_EQ(m->config, kSpiky);
  EXPECT_EQ(m->device_uuid, "GPU-h100-a");
  EXPECT_EQ(m->matched_size, kLarge);
  EXPECT_EQ(m->matched_problem, "n=1048576,type=int32");
  EXPECT_DOUBLE_EQ(m->size_distance, 0.0);
  EXPECT_DOUBLE_EQ(*m->time_ms, 4.0);
  EXPECT_EQ(m->template_hash, "template-1");
  EXPECT_NE(m->basis.find("GPU-h100-a"), std::string::npos) << m->basis;
}

TEST(Lookup, ExactDeviceByNameWhenTheUuidIsUnknown) {
  ScanResults db;
  lookup::Database results(db.path);
  const auto m = results.find(query("GPU-never-seen", "NVIDIA A100", 8, 0, kLarge));
  EXPECT_EQ(m->level, Level::exact_device);
  EXPECT_EQ(m->config, kLucky);
  EXPECT_EQ(m->device_name, "NVIDIA A100");
  EXPECT_NE(m->basis.find("name"), std::string::npos) << m->basis;
}

TEST(Lookup, SameComputeCapabilityPoolsItsDevices) {
  ScanResults db;
  lookup::Database results(db.path);
  // An unknown Hopper: the H100s' int32 results are h100a's only, at both sizes.
  const auto m = results.find(query("GPU-new", "NVIDIA H200", 9, 0, kSmall));
  EXPECT_EQ(m->level, Level::same_compute_capability);
  EXPECT_EQ(m->config, kSpiky);
  EXPECT_EQ(m->matched_size, kSmall);
  EXPECT_NE(m->basis.find("9.0"), std::string::npos) << m->basis;
}

TEST(Lookup, FamilyDefaultIsTheBestGeometricMeanRatioAmongTheMostMeasured) {
  ScanResults db;
  lookup::Database results(db.path);
  const auto m = results.find(query("", "Some Other GPU", 7, 5, kLarge));
  EXPECT_EQ(m->level, Level::family_default);
  // kSteady: ratios 1.1, 1.1, 1.1; kSpiky: 1, 1, 2 (geomean 1.26); kLucky: one pair only.
  EXPECT_EQ(m->config, kSteady);
  // Shown through its measurement nearest the requested size, the fastest of those.
  EXPECT_EQ(m->matched_size, kLarge);
  EXPECT_DOUBLE_EQ(*m->time_ms, 4.4);
  EXPECT_EQ(m->device_uuid, "GPU-h100-a");
}

TEST(Lookup, PrecomputedFamilyDefaultsAgreeWithScoringAndGoStaleOnAnyWrite) {
  ScanResults db;
  const auto unknown_gpu = query("", "Some Other GPU", 7, 5, kLarge);
  {
    db::Store store(db.path);
    store.refresh_family_defaults();
    auto row = store.database().prepare(
        "SELECT config, pairs, geomean_ratio FROM family_defaults WHERE family = 'scan' AND match_key = 'type=int32'");
    ASSERT_TRUE(row.step());
    EXPECT_EQ(row.column_text(0), kSteady);
    EXPECT_EQ(row.column_int(1), 3);
    EXPECT_NEAR(row.column_double(2), 1.1, 1e-12);
  }
  {
    lookup::Database results(db.path);
    EXPECT_EQ(results.find(unknown_gpu)->config, kSteady);
    EXPECT_DOUBLE_EQ(*results.find(unknown_gpu)->time_ms, 4.4);
    // Fresh, and no int64 result on any device of this compute capability: the built-in default.
    EXPECT_EQ(results.find(query("", "", 7, 5, kSmall, "uint32"))->level, Level::builtin_default);
  }
  {
    // kLucky becomes the best on every pair: the precomputed answer is stale until refreshed.
    db::Store store(db.path);
    ResultsBuilder b(store);
    b.result(db.h100a, "scan", kSmall, "int32", kLucky, 0.5);
    b.result(db.h100a, "scan", kLarge, "int32", kLucky, 2.0);
  }
  EXPECT_EQ(lookup::Database(db.path).find(unknown_gpu)->config, kLucky);
  db::Store(db.path).refresh_family_defaults();
  EXPECT_EQ(lookup::Database(db.path).find(unknown_gpu)->config, kLucky);
  // A fresh table is trusted as it is, which is what makes the third level fast.
  db::Store(db.path).database().exec("UPDATE family_defaults SET config = '" + kSpiky + "'");
  EXPECT_EQ(lookup::Database(db.path).find(unknown_gpu)->config, kSpiky);
}

TEST(Lookup, BuiltinDefaultWhenNothingOfTheTypeIsStored) {
  ScanResults db;
  lookup::Database results(db.path);
  const auto m = results.find(query("GPU-h100-a", "NVIDIA H100", 9, 0, 5000, "uint32"));
  EXPECT_EQ(m->level, Level::builtin_default);
  EXPECT_EQ(m->config, "algo=lookback,block=256,ept=8,vec=4,pad=1");
  EXPECT_EQ(m->integer("block"), 256);
  EXPECT_EQ(m->parameter("algo")->value, "lookback");
  EXPECT_TRUE(m->launches.empty());
  EXPECT_TRUE(std::isinf(m->size_distance));
  EXPECT_EQ(m->result_id, 0);
}

TEST(Lookup, TypesNeverMix) {
  ScanResults db;
  lookup::Database results(db.path);
  // h100a has int32 results only; the int64 one is h100b's, reached by compute capability.
  const auto m = results.find(query("GPU-h100-a", "", 9, 0, kSmall, "int64"));
  EXPECT_EQ(m->level, Level::same_compute_capability);
  EXPECT_EQ(m->config, kLucky);
  EXPECT_EQ(m->device_uuid, "GPU-h100-b");
}

TEST(Lookup, UnknownFamilyOrBadQueryIsAnError) {
  ScanResults db;
  lookup::Database results(db.path);
  try {
    results.find({"nosuch", {"GPU-h100-a", "", 9, 0}, {1024, "int32"}});
    FAIL() << "found a config for an unknown family";
  } catch (const lookup::Error& e) {
    EXPECT_NE(std::string(e.what()).find("nosuch"), std::string::npos) << e.what();
  }
  EXPECT_THROW(results.find(query("GPU-h100-a", "", 9, 0, 0)), lookup::Error);
  EXPECT_THROW(results.find({"", {}, {1024, "int32"}}), lookup::Error);
}

TEST(Lookup, NearestSizeByLogDistance) {
  ScanResults db;
  lookup::Database results(db.path);
  const auto near_small = results.find(query("GPU-h100-a", "", 0, 0, 2000));
  EXPECT_EQ(near_small->matched_size, kSmall);
  EXPECT_NEAR(near_small->size_distance, std::log(2000.0 / 1024.0), 1e-12);
  const auto near_large = results.find(query("GPU-h100-a", "", 0, 0, 200'000));
  EXPECT_EQ(near_large->matched_size, kLarge);
  EXPECT_NEAR(near_large->size_distance, std::log(1048576.0 / 200'000.0), 1e-12);
  // 32768 is the geometric midpoint of 1024 and 2^20: the larger size wins the tie.
  const auto midpoint = results.find(query("GPU-h100-a", "", 0, 0, 32768));
  EXPECT_EQ(midpoint->matched_size, kLarge);
  EXPECT_NEAR(midpoint->size_distance, std::log(32.0), 1e-12);
}

TEST(Lookup, ParametersAndLaunches) {
  ScanResults db;
  lookup::Database results(db.path);
  const auto m = results.find(query("GPU-h100-a", "", 0, 0, kLarge));
  ASSERT_EQ(m->parameters.size(), 5u);
  EXPECT_EQ(m->parameters[0].name, "algo");
  EXPECT_EQ(m->parameters[0].value, "blelloch");
  EXPECT_FALSE(m->parameters[0].integer);
  EXPECT_EQ(m->integer("block"), 512);
  EXPECT_EQ(m->integer("ept"), 2);
  EXPECT_THROW(m->integer("algo"), lookup::Error);
  EXPECT_THROW(m->integer("nosuch"), lookup::Error);
  ASSERT_EQ(m->launches.size(), 1u);
  EXPECT_EQ(m->launches[0].kernel, "scan_lookback");
  EXPECT_EQ(m->launches[0].grid[0], 512u);
  EXPECT_EQ(m->launches[0].block[0], 256u);
  EXPECT_EQ(m->launches[0].block[1], 1u);
  EXPECT_EQ(m->launches[0].dynamic_shared_bytes, 16904u);
}

// A plan with memsets (an atomic reduction presets its output first) comes back whole and in
// order, as the tuner stores it (stored_step); `launches` still lists the launches alone.
namespace {
// The answer for the one float32 result of `family` at kLarge on "GPU-h200", whose plan is `plan_json`.
std::shared_ptr<const lookup::Match> the_only_result(const std::string& family, const std::string& config,
                                                     const std::string& plan_json) {
  TempFolder folder;
  const std::string path = folder.file("results.db");
  {
    db::Store store(path);
    ResultsBuilder b(store);
    b.result(b.device("GPU-h200", "NVIDIA H200", 9, 0), family, kLarge, "float32", config, 0.006, "ok", plan_json);
  }
  lookup::Database results(path);
  return results.find({family, {"GPU-h200", "", 9, 0}, {kLarge, "float32"}});
}
}  // namespace

TEST(Lookup, PlanStepsKeepMemsetsInOrder) {
  nlohmann::json plan = nlohmann::json::array();
  plan.push_back(stored_step(MemsetStep{"out", 0x7f800000u, 4, 8, true}));
  plan.push_back(nlohmann::json::parse(cutune::testing::launch_json_for(512, 64)).at(0));
  const auto m = the_only_result("reduce", "algo=atomic,block=512", plan.dump());
  ASSERT_EQ(m->steps.size(), 2u);
  const auto* memset = std::get_if<lookup::Memset>(&m->steps[0]);
  ASSERT_NE(memset, nullptr);
  EXPECT_EQ(memset->buffer, "out");
  EXPECT_EQ(memset->word, 0x7f800000u);
  EXPECT_EQ(memset->bytes, 4);
  EXPECT_EQ(memset->byte_offset, 8);
  EXPECT_TRUE(memset->stream_write);
  const auto* launch = std::get_if<lookup::Launch>(&m->steps[1]);
  ASSERT_NE(launch, nullptr);
  EXPECT_EQ(launch->kernel, "scan_lookback");
  EXPECT_EQ(launch->grid[0], 64u);
  EXPECT_EQ(launch->block[0], 512u);
  EXPECT_FALSE(launch->fill_device);  // stored without the flag
  EXPECT_FALSE(launch->programmatic);
  ASSERT_EQ(m->launches.size(), 1u);
  EXPECT_EQ(m->launches[0].grid[0], 64u);
}

// A stream-K launch keeps the grid its device held and says that it filled the device.
TEST(Lookup, LaunchesThatFillTheDeviceSaySo) {
  const auto m =
      the_only_result("matmul", "algo=warptile,streamk=1",
                      R"([{"kernel":"matmul_warptile","grid":[264,1,1],"block":[256,1,1],"fill_device":true}])");
  ASSERT_EQ(m->launches.size(), 1u);
  EXPECT_TRUE(m->launches[0].fill_device);
  EXPECT_EQ(m->launches[0].grid[0], 264u);
}

// A launch measured with programmatic dependent launch says so; the launch before it does not.
TEST(Lookup, ProgrammaticLaunchesSaySo) {
  const auto m = the_only_result("avgmatvec", "fuse=splitcp,pdl=1",
                                 R"([{"kernel":"avg_rows","grid":[65536,1,1],"block":[128,1,1]},)"
                                 R"({"kernel":"matvec_tiles","grid":[8,8,1],"block":[256,1,1],"programmatic":true}])");
  ASSERT_EQ(m->launches.size(), 2u);
  EXPECT_FALSE(m->launches[0].programmatic);
  EXPECT_TRUE(m->launches[1].programmatic);
}

TEST(Lookup, AnswersAreCachedUntilCleared) {
  ScanResults db;
  lookup::Database results(db.path);
  const auto q = query("GPU-h100-a", "", 0, 0, kLarge);
  const auto first = results.find(q);
  EXPECT_EQ(results.find(q).get(), first.get());
  {
    db::Store store(db.path);
    ResultsBuilder(store).result(db.h100a, "scan", kLarge, "int32", kLucky, 0.5);
  }
  EXPECT_EQ(results.find(q)->config, kSpiky);  // still the cached answer
  results.clear_cache();
  EXPECT_EQ(results.find(q)->config, kLucky);
}

TEST(Lookup, RefusesOtherSchemasAndNonDatabases) {
  TempFolder folder;
  const auto message_of = [](const std::string& path) {
    try {
      lookup::Database results(path);
    } catch (const lookup::Error& e) {
      return std::string(e.what());
    }
    return std::string("opened");
  };
  EXPECT_NE(message_of(folder.file("missing.db")).find("missing.db"), std::string::npos);
  { std::ofstream(folder.file("empty.db")); }
  EXPECT_NE(message_of(folder.file("empty.db")).find("not a cutune database"), std::string::npos);
  const std::string old_path = folder.file("v1.db");
  {
    sql::Database raw(old_path, sql::Database::Mode::read_write_create);
    raw.exec(db::kSchemaV1);
    raw.exec("PRAGMA user_version=1");
  }
  EXPECT_NE(message_of(old_path).find("older"), std::string::npos) << message_of(old_path);
  const std::string newer_path = folder.file("newer.db");
  {
    db::Store store(newer_path);
    store.database().exec("PRAGMA user_version=" + std::to_string(db::kSchemaVersion + 1));
  }
  EXPECT_NE(message_of(newer_path).find("newer"), std::string::npos) << message_of(newer_path);
}

// ---- cubins ---------------------------------------------------------------------------------------

namespace {

std::vector<unsigned char> fake_cubin(unsigned char tag) { return {0x7f, 'E', 'L', 'F', 2, 1, 1, tag}; }

void store_cubin(const std::string& path, std::int64_t device_id, std::int64_t n, const std::string& config,
                 const std::string& arch, std::vector<unsigned char> image) {
  db::Store store(path);
  ResultsBuilder b(store);
  const auto best = store.best_result(device_id, b.template_of("scan"), b.problem("scan", n, "int32"));
  ASSERT_TRUE(best);
  ASSERT_EQ(best->config, config);
  store.put_cubin({0, arch, best->template_id, best->problem_id, config, std::move(image), best->launch_json,
                   R"(["-DCUTUNE_BLOCK=512"])", "13.0", ""});
}

}  // namespace

TEST(LookupCubin, ExactArchitecture) {
  ScanResults db;
  store_cubin(db.path, db.h100a, kLarge, kSpiky, "sm_90", fake_cubin(90));
  lookup::Database results(db.path);
  const auto cubin = results.cubin(query("GPU-h100-a", "", 9, 0, kLarge), "sm_90");
  ASSERT_TRUE(cubin) << cubin.reason;
  EXPECT_EQ(cubin.image, fake_cubin(90));
  EXPECT_EQ(cubin.arch, "sm_90");
  EXPECT_TRUE(cubin.exact_arch);
  EXPECT_EQ(cubin.nvrtc_version, "13.0");
  ASSERT_EQ(cubin.launches.size(), 1u);
  EXPECT_EQ(cubin.launches[0].kernel, "scan_lookback");
}

TEST(LookupCubin, EarlierMinorOfTheSameMajorButNeverAnotherMajor) {
  ScanResults db;
  store_cubin(db.path, db.a100, kLarge, kLucky, "sm_80", fake_cubin(80));
  lookup::Database results(db.path);
  const auto q = query("GPU-a100", "", 8, 6, kLarge);
  const auto ampere = results.cubin(q, "sm_86");
  ASSERT_TRUE(ampere) << ampere.reason;
  EXPECT_EQ(ampere.arch, "sm_80");
  EXPECT_FALSE(ampere.exact_arch);
  const auto hopper = results.cubin(q, "sm_90");
  EXPECT_FALSE(hopper);
  EXPECT_NE(hopper.reason.find("sm_90"), std::string::npos) << hopper.reason;
  EXPECT_NE(hopper.reason.find("stored for: sm_80"), std::string::npos) << hopper.reason;
  EXPECT_FALSE(results.cubin(q, "sm_75"));
  EXPECT_FALSE(results.cubin(q, "sm_86a")) << "architecture-specific targets need their exact cubin";
  EXPECT_NE(results.cubin(q, "ampere").reason.find("not an architecture"), std::string::npos);
}

TEST(LookupCubin, NoneStoredOrBuiltinOrDamagedSaysWhy) {
  ScanResults db;
  lookup::Database results(db.path);
  const auto none = results.cubin(query("GPU-h100-a", "", 9, 0, kLarge), "sm_90");
  EXPECT_FALSE(none);
  EXPECT_NE(none.reason.find("none stored"), std::string::npos) << none.reason;
  const auto builtin = results.cubin(query("GPU-h100-a", "", 9, 0, kLarge, "uint32"), "sm_90");
  EXPECT_NE(builtin.reason.find("built-in"), std::string::npos) << builtin.reason;
  store_cubin(db.path, db.h100a, kLarge, kSpiky, "sm_90", {1, 2, 3, 4, 5});
  const auto damaged = results.cubin(query("GPU-h100-a", "", 9, 0, kLarge), "sm_90");
  EXPECT_NE(damaged.reason.find("damaged"), std::string::npos) << damaged.reason;
}

// ---- one writer, several readers ------------------------------------------------------------------

TEST(LookupConcurrency, ReadersSeeAGrowingDatabaseWhileOneWriterStores) {
  ScanResults db;
  constexpr int kWrites = 200, kReaders = 3;
  std::atomic<bool> writing{true};
  std::atomic<int> failures{0}, reads{0};
  std::string first_failure;
  std::mutex failure_mutex;
  const auto record_failure = [&](const std::string& what) {
    std::lock_guard lock(failure_mutex);
    if (failures++ == 0) first_failure = what;
  };

  std::thread writer([&] {
    try {
      db::Store store(db.path);
      ResultsBuilder b(store);
      for (int i = 0; i < kWrites; ++i)
        b.result(db.h100a, "scan", kLarge, "int32",
                 "algo=warp,block=" + std::to_string(1000 + i) + ",ept=1,vec=1,pad=0", 10.0 + i);
    } catch (const std::exception& e) {
      record_failure(std::string("writer: ") + e.what());
    }
    writing = false;
  });
  std::vector<std::thread> readers;
  for (int r = 0; r < kReaders; ++r) {
    readers.emplace_back([&] {
      std::int64_t last_count = 0;
      while (writing || reads < kReaders) {
        try {
          // A fresh connection each time, so the cache never hides the writer's progress.
          lookup::Database results(db.path);
          if (results.find(query("GPU-h100-a", "", 9, 0, kLarge))->config != kSpiky) record_failure("wrong answer");
          sql::Database raw(db.path, sql::Database::Mode::read_only);
          auto count = raw.prepare("SELECT COUNT(*) FROM results");
          count.step();
          if (count.column_int(0) < last_count) record_failure("result count went down");
          last_count = count.column_int(0);
          ++reads;
        } catch (const std::exception& e) {
          record_failure(std::string("reader: ") + e.what());
          return;
        }
      }
    });
  }
  writer.join();
  for (auto& t : readers) t.join();
  EXPECT_EQ(failures, 0) << first_failure;
  EXPECT_GE(reads, kReaders);
  db::Store store(db.path);
  EXPECT_EQ(store.result_count(), 9 + kWrites);
}

TEST(LookupConcurrency, OneDatabaseObjectServesManyThreads) {
  ScanResults db;
  lookup::Database results(db.path);
  const std::vector<std::pair<lookup::Query, std::string>> cases{
      {query("GPU-h100-a", "", 0, 0, kLarge), kSpiky},
      {query("GPU-never-seen", "NVIDIA A100", 8, 0, kLarge), kLucky},
      {query("", "Some Other GPU", 7, 5, kLarge), kSteady},
      {query("GPU-h100-a", "", 9, 0, kSmall, "int64"), kLucky},
  };
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const auto& [q, expected] = cases[(i + t) % cases.size()];
        if (results.find(q)->config != expected) ++wrong;
        if (i % 500 == 0) results.clear_cache();  // misses race with hits
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong, 0);
}

TEST(Lookup, ArchOfRefusesComputeCapabilitiesNoGpuHas) {
  EXPECT_EQ(lookup::arch_of(9, 0), "sm_90");
  EXPECT_EQ(lookup::arch_of(12, 0), "sm_120");
  EXPECT_THROW(lookup::arch_of(0, 0), lookup::Error);
  EXPECT_THROW(lookup::arch_of(9, 10), lookup::Error);
  EXPECT_THROW(lookup::arch_of(9, -1), lookup::Error);
}

// ---- answers from memory, and the precomputed choices against a reference ---------------------------

TEST(LookupFromMemory, AnySizeAfterTheFirstIsAnsweredFromWhatTheFirstLookupLoaded) {
  ScanResults db;
  lookup::Database results(db.path);
  // The first lookup of (scan, GPU-h100-a, int32) loads every stored size of its level.
  EXPECT_EQ(results.find(query("GPU-h100-a", "", 9, 0, kSmall))->config, kSpiky);
  {
    db::Store store(db.path);
    ResultsBuilder(store).result(db.h100a, "scan", kLarge, "int32", kLucky, 0.5);
  }
  // Other sizes, never asked before, come from memory: the result stored since is not seen
  // (a lookup that read the database would answer kLucky at 2^20) until the cache is cleared.
  for (std::int64_t n : {kLarge, std::int64_t{3'000'000}, std::int64_t{200'000}, kLarge + 1}) {
    const auto m = results.find(query("GPU-h100-a", "", 9, 0, n));
    EXPECT_EQ(m->config, kSpiky) << n;
    EXPECT_EQ(m->matched_size, kLarge) << n;
    EXPECT_NEAR(m->size_distance, std::abs(std::log(static_cast<double>(n)) - std::log(static_cast<double>(kLarge))),
                1e-12);
  }
  results.clear_cache();
  EXPECT_EQ(results.find(query("GPU-h100-a", "", 9, 0, kLarge))->config, kLucky);
}

#ifdef __GLIBC__
TEST(LookupFromMemory, DistinctSizesDoNotGrowTheCache) {
  ScanResults db;
  lookup::Database results(db.path);
  auto q = query("GPU-h100-a", "", 9, 0, kSmall);
  results.find(q);
  const auto heap = [] { return mallinfo2().uordblks; };
  const std::size_t before = heap();
  // Twenty thousand distinct sizes: a cache per exact query would keep an answer for each.
  for (std::int64_t i = 0; i < 20'000; ++i) {
    q.problem.size = 1000 + i * 7919;
    ASSERT_EQ(results.find(q)->config, kSpiky);
  }
  EXPECT_LT(heap(), before + (256u << 10)) << "the heap grew by " << (heap() - before) << " bytes";
}
#endif

namespace {

// What a lookup must answer, computed the slow and obvious way from every stored result.
struct Expected {
  Level level = Level::builtin_default;
  std::string config;
  std::int64_t matched_size = 0;
  double ms = 0;
};

struct StoredRow {
  std::string uuid, name;
  int cc_major, cc_minor;
  std::int64_t problem_id, device_id, size;
  std::string config;
  double ms;
};

std::vector<StoredRow> ok_rows(const std::string& path, const std::string& match_key) {
  sql::Database raw(path, sql::Database::Mode::read_only);
  auto s = raw.prepare(R"sql(
    SELECT d.uuid, d.name, d.cc_major, d.cc_minor, p.id, d.id, p.size, r.config, r.time_ms_median
    FROM results r JOIN devices d ON d.id = r.device_id JOIN problems p ON p.id = r.problem_id
    WHERE p.family = 'scan' AND p.match_key = ?1 AND p.size > 0 AND r.status = 'ok' AND r.time_ms_median > 0)sql");
  s.bind(1, match_key);
  std::vector<StoredRow> rows;
  while (s.step())
    rows.push_back({s.column_text(0), s.column_text(1), static_cast<int>(s.column_int(2)),
                    static_cast<int>(s.column_int(3)), s.column_int(4), s.column_int(5), s.column_int(6),
                    s.column_text(7), s.column_double(8)});
  return rows;
}

// The rule of config_choice.hpp, written out: per pair each config's fastest time over the pair's
// fastest, quantised; the most pairs, then the least sum, then the smallest text.
std::string reference_choice(const std::vector<const StoredRow*>& rows) {
  std::map<std::pair<std::int64_t, std::int64_t>, double> best_of_pair;
  std::map<std::pair<std::string, std::pair<std::int64_t, std::int64_t>>, double> best_of_config;
  for (const StoredRow* r : rows) {
    const auto pair = std::make_pair(r->problem_id, r->device_id);
    auto [b, fresh] = best_of_pair.try_emplace(pair, r->ms);
    if (!fresh) b->second = std::min(b->second, r->ms);
    auto [c, fresh_config] = best_of_config.try_emplace({r->config, pair}, r->ms);
    if (!fresh_config) c->second = std::min(c->second, r->ms);
  }
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> score;  // config → (pairs, sum)
  for (const auto& [key, ms] : best_of_config) {
    auto& s = score[key.first];
    ++s.first;
    s.second += db::quantised_log(ms) - db::quantised_log(best_of_pair.at(key.second));
  }
  std::string chosen;
  std::pair<std::int64_t, std::int64_t> best{-1, 0};
  for (const auto& [config, s] : score)  // in text order: a tie keeps the smaller text
    if (s.first > best.first || (s.first == best.first && s.second < best.second)) {
      chosen = config;
      best = s;
    }
  return chosen;
}

Expected reference_lookup(const std::vector<StoredRow>& rows, const lookup::DeviceIdentity& d, std::int64_t n) {
  const auto distance = [n](std::int64_t size) { return std::abs(std::log(double(n)) - std::log(double(size))); };
  const std::vector<std::pair<Level, std::function<bool(const StoredRow&)>>> levels{
      {Level::exact_device, [&](const StoredRow& r) { return !d.uuid.empty() && r.uuid == d.uuid; }},
      {Level::exact_device, [&](const StoredRow& r) { return !d.name.empty() && r.name == d.name; }},
      {Level::same_compute_capability,
       [&](const StoredRow& r) { return d.cc_major > 0 && r.cc_major == d.cc_major && r.cc_minor == d.cc_minor; }}};
  for (const auto& [level, on_level] : levels) {
    std::vector<const StoredRow*> mine;
    for (const StoredRow& r : rows)
      if (on_level(r)) mine.push_back(&r);
    if (mine.empty()) continue;
    double nearest_distance = std::numeric_limits<double>::infinity();
    for (const StoredRow* r : mine) nearest_distance = std::min(nearest_distance, distance(r->size));
    std::int64_t nearest = 0;  // the largest of the nearest, to rounding
    for (const StoredRow* r : mine)
      if (distance(r->size) <= nearest_distance + 1e-9) nearest = std::max(nearest, r->size);
    std::vector<const StoredRow*> at;
    for (const StoredRow* r : mine)
      if (r->size == nearest) at.push_back(r);
    Expected e{level, reference_choice(at), nearest, std::numeric_limits<double>::infinity()};
    for (const StoredRow* r : at)
      if (r->config == e.config) e.ms = std::min(e.ms, r->ms);
    return e;
  }
  if (rows.empty()) return {};
  std::vector<const StoredRow*> all;
  for (const StoredRow& r : rows) all.push_back(&r);
  Expected e{Level::family_default, reference_choice(all), 0, 0};
  std::map<std::int64_t, double> fastest;  // the default's fastest time per size
  for (const StoredRow& r : rows)
    if (r.config == e.config) {
      auto [it, fresh] = fastest.try_emplace(r.size, r.ms);
      if (!fresh) it->second = std::min(it->second, r.ms);
    }
  double nearest_distance = std::numeric_limits<double>::infinity();
  for (const auto& [size, ms] : fastest) nearest_distance = std::min(nearest_distance, distance(size));
  for (const auto& [size, ms] : fastest)  // of the nearest, the faster; then the larger
    if (distance(size) <= nearest_distance + 1e-9 && (e.matched_size == 0 || ms <= e.ms)) {
      e.matched_size = size;
      e.ms = ms;
    }
  return e;
}

// A database where choices tie often (times from a few values), pairs hold up to 40 configs, and
// devices share names and compute capabilities.
struct RandomResults {
  TempFolder folder;
  std::string path = folder.file("random.db");
  std::vector<std::int64_t> devices;
  std::vector<std::string> configs;
  const std::vector<std::int64_t> sizes{1024, 4096, 65536, 1 << 20};
  std::mt19937 random{20261125};

  RandomResults() {
    for (int c = 0; c < 40; ++c)
      configs.push_back("algo=warp,block=" + std::to_string(32 << (c % 5)) + ",ept=" + std::to_string(1 + c / 5) +
                        ",vec=1,pad=0");
    db::Store store(path);
    ResultsBuilder b(store);
    devices = {b.device("GPU-a", "N1", 9, 0), b.device("GPU-b", "N1", 9, 0), b.device("GPU-c", "N2", 9, 0),
               b.device("GPU-d", "N3", 8, 0), b.device("GPU-e", "N4", 8, 0)};
    for (std::int64_t device : devices)
      for (const char* type : {"int32", "int64"})
        for (std::int64_t n : sizes) {
          if (uniform() < 0.3) continue;
          for (const std::string& config : configs)
            if (uniform() < 0.9) store_one(b, device, type, n, config);
        }
  }

  double uniform() { return std::uniform_real_distribution<double>(0, 1)(random); }
  template <class T>
  const T& pick(const std::vector<T>& from) {
    return from[std::uniform_int_distribution<std::size_t>(0, from.size() - 1)(random)];
  }

  void store_one(ResultsBuilder& b, std::int64_t device, const std::string& type, std::int64_t n,
                 const std::string& config) {
    static const std::vector<double> times{1.0, 1.5, 2.0, 3.0, 4.0};
    if (uniform() < 0.1)
      b.result(device, "scan", n, type, config, std::nullopt, "compile_error");
    else
      b.result(device, "scan", n, type, config, pick(times) * static_cast<double>(n) / 1024);
  }

  // Results changed after the refresh, as by a tuner and a user meanwhile: new and re-measured
  // results (a few per pair, and one pair that is new), results that failed on a second run, and
  // deleted ones.
  void change_without_refresh() {
    db::Store store(path);
    ResultsBuilder b(store);
    for (int i = 0; i < 12; ++i)
      store_one(b, pick(devices), pick(std::vector<std::string>{"int32", "int64"}), pick(sizes), pick(configs));
    store_one(b, devices[0], "int32", 300'000, configs[3]);
    store_one(b, devices[0], "int32", 300'000, configs[4]);
    store.database().exec("UPDATE results SET status = 'wrong_result' WHERE id % 97 = 5");
    store.database().exec("DELETE FROM results WHERE id % 89 = 7");
    // Changes that move answers: int64's family default fails everywhere (one change in each of
    // its pairs), and on two pairs a config is re-measured or newly measured far faster. int32's
    // pairs change here and there only, so most of its groups mix changed and unchanged pairs.
    store.database().exec(
        "UPDATE results SET status = 'wrong_result' WHERE problem_id IN (SELECT id FROM problems WHERE match_key = "
        "'type=int64') AND config = (SELECT config FROM family_defaults WHERE match_key = 'type=int64')");
    store.database().exec(
        "UPDATE results SET time_ms_median = time_ms_median / 100 WHERE id = (SELECT MAX(r.id) FROM results r JOIN "
        "problems p ON p.id = r.problem_id WHERE r.status = 'ok' AND p.match_key = 'type=int32' AND r.device_id = 3)");
    const auto [device, n] = std::pair{devices[1], sizes[2]};
    b.result(device, "scan", n, "int64", "algo=new,block=32,ept=1,vec=1,pad=0", 0.001);
  }

  std::vector<std::string> check(const char* phase) {
    std::vector<std::string> wrong;
    lookup::Database results(path);
    std::vector<lookup::DeviceIdentity> identities{{"", "", 0, 0},      {"GPU-x", "", 7, 5}, {"GPU-x", "", 9, 0},
                                                   {"GPU-x", "", 8, 0}, {"", "N1", 8, 0},    {"", "N3", 0, 0}};
    for (const char* uuid : {"GPU-a", "GPU-b", "GPU-c", "GPU-d", "GPU-e"}) identities.push_back({uuid, "", 9, 0});
    const std::vector<std::int64_t> asked{1, 1000, 1024, 2048, 3000, 4096, 16384, 65536, 300'000, 1 << 20, 1 << 26};
    for (const char* type : {"int32", "int64", "uint32"}) {
      const std::vector<StoredRow> rows = ok_rows(path, std::string("type=") + type);
      for (const auto& d : identities)
        for (std::int64_t n : asked) {
          const Expected e = reference_lookup(rows, d, n);
          const auto m = results.find({"scan", d, {n, type}});
          const bool builtin = e.config.empty();
          const bool same =
              m->level == (builtin ? Level::builtin_default : e.level) &&
              (builtin ||
               (m->config == e.config && m->matched_size == e.matched_size && m->time_ms && *m->time_ms == e.ms &&
                std::abs(m->size_distance - std::abs(std::log(double(n)) - std::log(double(e.matched_size)))) < 1e-12));
          if (!same)
            wrong.push_back(std::string(phase) + ": " + type + " " + d.uuid + "/" + d.name + "/" +
                            std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor) + " n=" + std::to_string(n) +
                            ": got " + lookup::to_string(m->level) + " " + m->config + " at " +
                            std::to_string(m->matched_size) + ", expected " + lookup::to_string(e.level) + " " +
                            e.config + " at " + std::to_string(e.matched_size));
        }
    }
    return wrong;
  }
};

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (std::size_t i = 0; i < std::min<std::size_t>(lines.size(), 10); ++i) text += lines[i] + "\n";
  return text;
}

std::int64_t scalar(const std::string& path, const std::string& sql) {
  sql::Database raw(path, sql::Database::Mode::read_only);
  auto s = raw.prepare(sql);
  s.step();
  return s.column_int(0);
}

}  // namespace

// Precomputed choices as they are, corrected for changes since, and scored on the spot (where the
// tables may not be used) give what the rule gives on every stored result, at every level.
TEST(LookupFromMemory, PrecomputedCorrectedAndScoredAnswersAgreeWithTheRule) {
  RandomResults db;
  // Never refreshed: every pair counts as changed, and is read again.
  EXPECT_GT(scalar(db.path, "SELECT COUNT(*) FROM changed_results"), 0);
  EXPECT_EQ(joined(db.check("all changed")), "");
  db::Store(db.path).refresh_family_defaults();
  ASSERT_EQ(scalar(db.path, "SELECT COUNT(*) FROM changed_results"), 0);
  ASSERT_GT(scalar(db.path, "SELECT COUNT(*) FROM choices"), 0);
  EXPECT_EQ(joined(db.check("refreshed")), "");
  db.change_without_refresh();
  EXPECT_EQ(joined(db.check("changed since")), "");
  db::Store(db.path).refresh_family_defaults();
  EXPECT_EQ(joined(db.check("refreshed again")), "");
  // A device renamed regroups pairs: the tables may not be used until the next refresh.
  {
    db::Store store(db.path);
    store.upsert_device(cutune::testing::device_record("GPU-c", "N1", 9, 0));
  }
  ASSERT_EQ(scalar(db.path, "SELECT value FROM meta WHERE key = 'choices_valid'"), 0);
  EXPECT_EQ(joined(db.check("renamed, scored here")), "");
  db.change_without_refresh();
  EXPECT_EQ(joined(db.check("renamed and changed, scored here")), "");
  db::Store(db.path).refresh_family_defaults();
  ASSERT_EQ(scalar(db.path, "SELECT value FROM meta WHERE key = 'choices_valid'"), 1);
  EXPECT_EQ(joined(db.check("refreshed in full")), "");
}

// A device whose results changed since the refresh on a pair that is alone at its size is answered
// from that pair's fastest results; ties in time go to the smaller config text and, of that
// config, to its first result, as the refreshed tables (the rule over the pair's every result) have it.
TEST(LookupFromMemory, AStalePairAloneAtItsSizeBreaksTiesAsTheRefreshedTables) {
  TempFolder folder;
  const std::string path = folder.file("ties.db");
  std::int64_t gpu = 0;
  const std::string kA = "algo=warp,block=128,ept=1,vec=1,pad=0", kB = "algo=warp,block=256,ept=1,vec=1,pad=0";
  {
    db::Store store(path);
    ResultsBuilder b(store);
    gpu = b.device("GPU-ties", "Tie GPU", 9, 0);
    b.result(gpu, "scan", kSmall, "int32", kSteady, 3.0);
    store.refresh_family_defaults();
    // After the refresh: two configs tie at 1.5 ms, the larger text first; the smaller one twice.
    b.result(gpu, "scan", kSmall, "int32", kB, 1.5);
    b.result(gpu, "scan", kSmall, "int32", kA, 1.5);
    b.result(gpu, "scan", kSmall, "int32", kA, 1.5);
  }
  const auto query_of = [&] { return lookup::Query{"scan", {"GPU-ties", "", 9, 0}, {kSmall, "int32"}}; };
  const auto stale = lookup::Database(path).find(query_of());
  ASSERT_GT(scalar(path, "SELECT COUNT(*) FROM changed_results"), 0);
  db::Store(path).refresh_family_defaults();
  const auto refreshed = lookup::Database(path).find(query_of());
  EXPECT_EQ(stale->level, Level::exact_device);
  EXPECT_EQ(stale->config, kA);
  EXPECT_EQ(stale->config, refreshed->config);
  EXPECT_EQ(stale->time_ms, refreshed->time_ms);
  EXPECT_EQ(stale->result_id, refreshed->result_id);  // the config's first result of the two
}

// ---- databases of schema version 5: no precomputed choices, read as they are --------------------------

namespace {

// What cutune wrote at schema version 5: scan results of two Hopper GPUs and an Ampere at two
// sizes, family defaults refreshed (fresh: results_version = family_defaults_version).
void create_version_5_database(const std::string& path) {
  sql::Database raw(path, sql::Database::Mode::read_write_create);
  db::migrate_to(raw, 5);
  raw.exec(R"sql(
    INSERT INTO devices (id, uuid, name, cc_major, cc_minor, sm_count, memory_bytes, l2_bytes, memory_clock_khz,
                         bus_width_bits, theoretical_bandwidth_gbs, driver_version, nvrtc_version)
      VALUES (1, 'GPU-h100-a', 'NVIDIA H100', 9, 0, 132, 1, 1, 1, 1, 1, 13000, '13.0'),
             (2, 'GPU-h100-b', 'NVIDIA H100', 9, 0, 132, 1, 1, 1, 1, 1, 13000, '13.0'),
             (3, 'GPU-a100', 'NVIDIA A100', 8, 0, 108, 1, 1, 1, 1, 1, 13000, '13.0');
    INSERT INTO templates (id, family, source_hash, source, created_at) VALUES (1, 'scan', 'h', 's', '2026-11-25');
    INSERT INTO problems (id, family, key, size, dtype, descriptor, match_key)
      VALUES (1, 'scan', 'n=1024,type=int32', 1024, 'int32', '{}', 'type=int32'),
             (2, 'scan', 'n=1048576,type=int32', 1048576, 'int32', '{}', 'type=int32');
    INSERT INTO runs (id, family, device_id, template_id, strategy, seed, budget, command, tool_version, started_at,
                      finished_at, status)
      VALUES (1, 'scan', 1, 1, 'brute_force', 1, '', '', 'cutune', '2026-11-25', '2026-11-25', 'finished');)sql");
  const std::vector<std::tuple<int, int, std::string, double>> results{
      {1, 1, kSpiky, 1.0},  {1, 1, kSteady, 1.1}, {1, 2, kSpiky, 4.0},   {1, 2, kSteady, 4.4}, {2, 2, kLucky, 3.0},
      {2, 2, kSteady, 3.5}, {3, 2, kSpiky, 20.0}, {3, 2, kSteady, 11.0}, {3, 2, kLucky, 10.0}};
  auto insert = raw.prepare(R"sql(
    INSERT INTO results (run_id, device_id, template_id, problem_id, config, config_json, status, time_ms_median,
                         samples, compile_s, verify_s, benchmark_s, error, launch_json, created_at, elapsed_s)
      VALUES (1, ?1, 1, ?2, ?3, '{}', 'ok', ?4, 10, 0, 0, 0, '', '[]', '2026-11-25', 1))sql");
  for (const auto& [device, problem, config, ms] : results) {
    insert.bind(1, device).bind(2, problem).bind(3, config).bind(4, ms);
    insert.run();
  }
  raw.exec(R"sql(
    INSERT INTO family_defaults VALUES ('scan', 'type=int32', ')sql" +
           kSteady + R"sql(', 3, 1.1);
    UPDATE meta SET value = (SELECT value FROM meta WHERE key = 'results_version') WHERE key = 'family_defaults_version';)sql");
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST(LookupFromMemory, AVersion5DatabaseIsReadAsItIsAndAnswersAsAfterItsMigration) {
  TempFolder folder;
  const std::string old_path = folder.file("v5.db"), migrated_path = folder.file("v6.db");
  create_version_5_database(old_path);
  std::filesystem::copy_file(old_path, migrated_path);
  { db::Store store(migrated_path); }  // the writer migrates (and computes the choices)
  ASSERT_EQ(scalar(migrated_path, "PRAGMA user_version"), db::kSchemaVersion);
  const std::string before = file_bytes(old_path);
  const std::vector<lookup::DeviceIdentity> devices{{"GPU-h100-a", "", 9, 0},
                                                    {"GPU-h100-b", "", 9, 0},
                                                    {"", "NVIDIA A100", 8, 0},
                                                    {"GPU-new", "", 9, 0},
                                                    {"", "", 7, 5}};
  const auto answers = [&](const std::string& path) {
    lookup::Database results(path);
    std::vector<std::string> out;
    for (const auto& d : devices)
      for (std::int64_t n :
           {std::int64_t{1}, kSmall, std::int64_t{32768}, std::int64_t{200'000}, kLarge, std::int64_t{1} << 30}) {
        const auto m = results.find({"scan", d, {n, "int32"}});
        out.push_back(std::string(lookup::to_string(m->level)) + " " + m->config + " " +
                      std::to_string(m->matched_size) + " " + std::to_string(m->size_distance));
      }
    return out;
  };
  const auto old_answers = answers(old_path);
  EXPECT_EQ(old_answers, answers(migrated_path));
  EXPECT_EQ(old_answers[0].rfind("exact_device " + kSpiky + " 1024", 0), 0u) << old_answers[0];
  EXPECT_EQ(file_bytes(old_path), before) << "reading a version 5 file changed it";
  EXPECT_EQ(scalar(old_path, "PRAGMA user_version"), 5);
  // Stale family defaults of version 5 (results changed after the refresh: the default failed on
  // a second run) are scored on the spot: kSpiky, measured on three pairs, beats kLucky's two.
  {
    sql::Database raw(old_path, sql::Database::Mode::read_write_create);
    raw.exec("UPDATE results SET status = 'wrong_result' WHERE config = '" + kSteady + "'");
  }
  EXPECT_EQ(lookup::Database(old_path).find({"scan", {"", "", 7, 5}, {kLarge, "int32"}})->config, kSpiky);
}

// ---- the element type ----------------------------------------------------------------------------------

TEST(Lookup, AnEmptyDtypeTakesTheTypeTheDatabaseSaysOrIsRefused) {
  const auto refused = [](lookup::Database& results, const lookup::Query& q, const std::string& part) {
    try {
      const auto m = results.find(q);
      ADD_FAILURE() << "answered " << lookup::to_string(m->level) << " " << m->config;
    } catch (const lookup::Error& e) {
      EXPECT_NE(std::string(e.what()).find("needs the element type"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  // scan stored without a problem schema, in int32 and int64: no default to take, and two types.
  ScanResults db;
  lookup::Database results(db.path);
  refused(results, query("GPU-h100-a", "", 9, 0, kLarge, ""), "several (int32, int64)");
  // One stored element type: that one, and the match key says so.
  TempFolder folder;
  const std::string one_type = folder.file("one.db");
  {
    db::Store store(one_type);
    ResultsBuilder b(store);
    b.result(b.device("GPU-x", "X", 9, 0), "scan", kSmall, "int32", kFast, 0.5);
  }
  lookup::Database one(one_type);
  const auto m = one.find({"scan", {"GPU-x", "", 9, 0}, {kSmall, ""}});
  EXPECT_EQ(m->level, Level::exact_device);
  EXPECT_EQ(m->match_key, "type=int32");
  // Nothing stored of a family that has a built-in default: refused, rather than its built-in
  // default for want of a type; with a type, the built-in default.
  const std::string empty = folder.file("empty.db");
  { db::Store store(empty); }
  lookup::Database nothing(empty);
  refused(nothing, {"scan", {"GPU-x", "", 9, 0}, {kSmall, ""}}, "nothing of the family is stored");
  EXPECT_EQ(nothing.find({"scan", {"GPU-x", "", 9, 0}, {kSmall, "int32"}})->level, Level::builtin_default);
}
