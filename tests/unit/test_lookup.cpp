// The lookup library: every fallback level, nearest-size selection, parameters and launches,
// the cache, the schema checks, cubins with the architecture check, and readers beside a writer.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <fstream>
#include <thread>

#include "family.hpp"
#include "lookup.hpp"
#include "results_fixture.hpp"

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
TEST(Lookup, PlanStepsKeepMemsetsInOrder) {
  TempFolder folder;
  const std::string path = folder.file("results.db");
  {
    db::Store store(path);
    ResultsBuilder b(store);
    const auto gpu = b.device("GPU-h200", "NVIDIA H200", 9, 0);
    nlohmann::json plan = nlohmann::json::array();
    plan.push_back(stored_step(MemsetStep{"out", 0x7f800000u, 4, 8, true}));
    plan.push_back(nlohmann::json::parse(cutune::testing::launch_json_for(512, 64)).at(0));
    b.result(gpu, "reduce", kLarge, "float32", "algo=atomic,block=512", 0.006, "ok", plan.dump());
  }
  lookup::Database results(path);
  const auto m = results.find({"reduce", {"GPU-h200", "", 9, 0}, {kLarge, "float32"}});
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
  ASSERT_EQ(m->launches.size(), 1u);
  EXPECT_EQ(m->launches[0].grid[0], 64u);
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
        b.result(db.h100a, "scan", kLarge, "int32", "algo=warp,block=" + std::to_string(1000 + i) + ",ept=1,vec=1,pad=0",
                 10.0 + i);
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
