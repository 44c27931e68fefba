// The C API: the same answers as the C++ API, failures as statuses with a message, never an exception.
#include <gtest/gtest.h>

#include <cmath>

#include "cutune_lookup.h"
#include "results_fixture.hpp"

using cutune::testing::ResultsBuilder;
using cutune::testing::TempFolder;

extern "C" int c_client_describe(const char* path, const char* uuid, int64_t n, char* out, size_t out_size);

namespace {

struct OneDevice {
  TempFolder folder;
  std::string path = folder.file("results.db");
  OneDevice() {
    cutune::db::Store store(path);
    ResultsBuilder b(store);
    const auto gpu = b.device("GPU-c", "C GPU", 9, 0);
    b.result(gpu, "scan", 4096, "int32", "algo=warp,block=128,ept=4,vec=4,pad=0", 0.02);
    b.result(gpu, "scan", 4096, "int32", "algo=lookback,block=256,ept=8,vec=4,pad=1", 0.01);
    const auto template_id = b.template_of("scan");
    const auto best = store.best_result(gpu, template_id, b.problem("scan", 4096, "int32"));
    store.put_cubin({0,
                     "sm_90",
                     template_id,
                     best->problem_id,
                     best->config,
                     {0x7f, 'E', 'L', 'F', 9},
                     best->launch_json,
                     "[]",
                     "13.0",
                     ""});
  }
};

struct Handles {
  cutune_db* db = nullptr;
  cutune_match* match = nullptr;
  cutune_cubin* cubin = nullptr;
  ~Handles() {
    cutune_cubin_free(cubin);
    cutune_match_free(match);
    cutune_db_close(db);
  }
};

}  // namespace

TEST(LookupC, FromACProgram) {
  OneDevice fixture;
  char text[512] = {0};
  ASSERT_EQ(c_client_describe(fixture.path.c_str(), "GPU-c", 5000, text, sizeof text), CUTUNE_OK)
      << cutune_last_error();
  EXPECT_STREQ(text,
               "level=1 exact_device config=algo=lookback,block=256,ept=8,vec=4,pad=1 block=256 launches=1 "
               "kernel=scan_lookback grid=2");
}

TEST(LookupC, EveryAccessor) {
  OneDevice fixture;
  Handles h;
  ASSERT_EQ(cutune_db_open(fixture.path.c_str(), &h.db), CUTUNE_OK) << cutune_last_error();
  const cutune_query q{sizeof(cutune_query), "scan", nullptr, "C GPU", 9, 0, 4096, "int32", nullptr, 0};
  ASSERT_EQ(cutune_find(h.db, &q, &h.match), CUTUNE_OK) << cutune_last_error();
  EXPECT_EQ(cutune_match_level(h.match), CUTUNE_LEVEL_EXACT_DEVICE);
  EXPECT_STREQ(cutune_match_basis(h.match), "device name C GPU");
  ASSERT_EQ(cutune_match_parameter_count(h.match), 5u);
  EXPECT_STREQ(cutune_match_parameter_name(h.match, 0), "algo");
  EXPECT_STREQ(cutune_match_parameter_value(h.match, 0), "lookback");
  EXPECT_EQ(cutune_match_parameter_name(h.match, 5), nullptr);
  int64_t value = 0;
  EXPECT_EQ(cutune_match_integer(h.match, "ept", &value), CUTUNE_OK);
  EXPECT_EQ(value, 8);
  EXPECT_EQ(cutune_match_integer(h.match, "algo", &value), CUTUNE_NOT_FOUND);
  EXPECT_NE(std::string(cutune_last_error()).find("algo"), std::string::npos);
  cutune_launch launch = CUTUNE_LAUNCH_INIT;
  EXPECT_EQ(cutune_match_launch(h.match, 1, &launch), CUTUNE_NOT_FOUND);
  EXPECT_EQ(cutune_match_matched_size(h.match), 4096);
  EXPECT_STREQ(cutune_match_matched_problem(h.match), "n=4096,type=int32");
  EXPECT_DOUBLE_EQ(cutune_match_size_distance(h.match), 0.0);
  EXPECT_DOUBLE_EQ(cutune_match_time_ms(h.match), 0.01);

  ASSERT_EQ(cutune_find_cubin(h.db, &q, "sm_90", &h.cubin), CUTUNE_OK) << cutune_last_error();
  size_t bytes = 0;
  const auto* data = static_cast<const unsigned char*>(cutune_cubin_data(h.cubin, &bytes));
  ASSERT_EQ(bytes, 5u);
  EXPECT_EQ(data[4], 9);
  EXPECT_STREQ(cutune_cubin_arch(h.cubin), "sm_90");
  cutune_cubin* other = nullptr;
  EXPECT_EQ(cutune_find_cubin(h.db, &q, "sm_80", &other), CUTUNE_NOT_FOUND);
  EXPECT_EQ(other, nullptr);
  EXPECT_NE(std::string(cutune_last_error()).find("sm_80"), std::string::npos) << cutune_last_error();
}

namespace {
// Opens a database of one float32 result of `family` at n = 4096 on "GPU-c", whose plan is
// `plan_json`, and finds it: a test of what the plan's steps say.
void find_the_only_result(TempFolder& folder, Handles& h, const char* family, const char* config,
                          const std::string& plan_json) {
  const std::string path = folder.file("results.db");
  {
    cutune::db::Store store(path);
    ResultsBuilder b(store);
    b.result(b.device("GPU-c", "C GPU", 9, 0), family, 4096, "float32", config, 0.01, "ok", plan_json);
  }
  ASSERT_EQ(cutune_db_open(path.c_str(), &h.db), CUTUNE_OK) << cutune_last_error();
  const cutune_query q{sizeof(cutune_query), family, "GPU-c", nullptr, 9, 0, 4096, "float32", nullptr, 0};
  ASSERT_EQ(cutune_find(h.db, &q, &h.match), CUTUNE_OK) << cutune_last_error();
}
}  // namespace

// The plan's steps: a memset, then the launch, each with its fields; past the end: NOT_FOUND.
TEST(LookupC, StepsCarryMemsetsAndLaunchesInOrder) {
  TempFolder folder;
  Handles h;
  const std::string launch = cutune::testing::launch_json_for(128, 7);
  find_the_only_result(folder, h, "reduce", "algo=atomic,block=128",
                       R"([{"memset":"out","word":0,"bytes":4,"byte_offset":0},)" + launch.substr(1));
  ASSERT_EQ(cutune_match_step_count(h.match), 2u);
  EXPECT_EQ(cutune_match_launch_count(h.match), 1u);
  cutune_step step = CUTUNE_STEP_INIT;
  ASSERT_EQ(cutune_match_step(h.match, 0, &step), CUTUNE_OK);
  EXPECT_EQ(step.kind, CUTUNE_STEP_MEMSET);
  EXPECT_STREQ(step.memset.buffer, "out");
  EXPECT_EQ(step.memset.word, 0u);
  EXPECT_EQ(step.memset.bytes, 4);
  EXPECT_EQ(step.memset.stream_write, 0);  // stored before the flag existed: a memset
  ASSERT_EQ(cutune_match_step(h.match, 1, &step), CUTUNE_OK);
  EXPECT_EQ(step.kind, CUTUNE_STEP_LAUNCH);
  EXPECT_STREQ(step.launch.kernel, "scan_lookback");
  EXPECT_EQ(step.launch.grid[0], 7u);
  EXPECT_EQ(step.launch.block[0], 128u);
  EXPECT_EQ(cutune_match_step(h.match, 2, &step), CUTUNE_NOT_FOUND);
  EXPECT_NE(std::string(cutune_last_error()).find("step 2 of 2"), std::string::npos) << cutune_last_error();
}

// A launch that fills the device (matmul's stream-K) says so through its own accessor, so that
// cutune_launch keeps its size; other steps say 0, and past the end -1.
TEST(LookupC, StepsSayWhetherTheirGridFillsTheDevice) {
  TempFolder folder;
  Handles h;
  find_the_only_result(folder, h, "matmul", "algo=warptile,streamk=1",
                       R"([{"memset":"tickets","word":0,"bytes":4096,"byte_offset":0},)"
                       R"({"kernel":"matmul_warptile","grid":[264,1,1],"block":[256,1,1],"fill_device":true}])");
  ASSERT_EQ(cutune_match_step_count(h.match), 2u);
  EXPECT_EQ(cutune_match_step_fills_device(h.match, 0), 0);  // the memset
  EXPECT_EQ(cutune_match_step_fills_device(h.match, 1), 1);
  EXPECT_EQ(cutune_match_step_fills_device(h.match, 2), -1);
  EXPECT_EQ(cutune_match_step_fills_device(nullptr, 0), -1);
  EXPECT_EQ(cutune_match_step_programmatic(h.match, 1), 0);
}

// A launch measured with programmatic dependent launch says so through its own accessor.
TEST(LookupC, StepsSayWhetherTheyWereLaunchedProgrammatically) {
  TempFolder folder;
  Handles h;
  find_the_only_result(folder, h, "avgmatvec", "fuse=splitcp,pdl=1",
                       R"([{"kernel":"avg_rows","grid":[65536,1,1],"block":[128,1,1]},)"
                       R"({"kernel":"matvec_tiles","grid":[8,8,1],"block":[256,1,1],"programmatic":true}])");
  ASSERT_EQ(cutune_match_step_count(h.match), 2u);
  EXPECT_EQ(cutune_match_step_programmatic(h.match, 0), 0);
  EXPECT_EQ(cutune_match_step_programmatic(h.match, 1), 1);
  EXPECT_EQ(cutune_match_step_programmatic(h.match, 2), -1);
  EXPECT_EQ(cutune_match_step_programmatic(nullptr, 0), -1);
}

TEST(LookupC, BuiltinDefaultHasNoTimeAndInfiniteDistance) {
  OneDevice fixture;
  Handles h;
  ASSERT_EQ(cutune_db_open(fixture.path.c_str(), &h.db), CUTUNE_OK);
  const cutune_query q{sizeof(cutune_query), "scan", "GPU-c", nullptr, 9, 0, 4096, "int64", nullptr, 0};
  ASSERT_EQ(cutune_find(h.db, &q, &h.match), CUTUNE_OK) << cutune_last_error();
  EXPECT_EQ(cutune_match_level(h.match), CUTUNE_LEVEL_BUILTIN_DEFAULT);
  EXPECT_TRUE(std::isnan(cutune_match_time_ms(h.match)));
  EXPECT_TRUE(std::isinf(cutune_match_size_distance(h.match)));
  EXPECT_EQ(cutune_match_launch_count(h.match), 0u);
}

TEST(LookupC, FailuresAreStatusesWithAMessage) {
  TempFolder folder;
  cutune_db* db = nullptr;
  EXPECT_EQ(cutune_db_open(folder.file("missing.db").c_str(), &db), CUTUNE_ERROR);
  EXPECT_EQ(db, nullptr);
  EXPECT_NE(std::string(cutune_last_error()).find("missing.db"), std::string::npos) << cutune_last_error();
  EXPECT_EQ(cutune_db_open(nullptr, &db), CUTUNE_ERROR);

  OneDevice fixture;
  Handles h;
  ASSERT_EQ(cutune_db_open(fixture.path.c_str(), &h.db), CUTUNE_OK);
  EXPECT_STREQ(cutune_last_error(), "");
  const cutune_query unknown{sizeof(cutune_query), "nosuch", nullptr, nullptr, 0, 0, 10, "int32", nullptr, 0};
  EXPECT_EQ(cutune_find(h.db, &unknown, &h.match), CUTUNE_ERROR);
  EXPECT_NE(std::string(cutune_last_error()).find("nosuch"), std::string::npos);
  const cutune_query no_size{sizeof(cutune_query), "scan", nullptr, nullptr, 0, 0, 0, "int32", nullptr, 0};
  EXPECT_EQ(cutune_find(h.db, &no_size, &h.match), CUTUNE_ERROR);
  EXPECT_EQ(cutune_find(h.db, nullptr, &h.match), CUTUNE_ERROR);
}

// A NULL or empty dtype takes the element type from the element-type field, the family's declared
// default or the one type its problems are stored with; where none of these says it, the lookup is
// refused (it was answered with the built-in default).
TEST(LookupC, ANullOrEmptyDtypeIsRefusedWhereTheDatabaseCannotSayTheType) {
  TempFolder folder;
  const std::string path = folder.file("two-types.db");
  {
    cutune::db::Store store(path);
    ResultsBuilder b(store);
    const auto gpu = b.device("GPU-c", "C GPU", 9, 0);
    b.result(gpu, "scan", 4096, "int32", "algo=warp,block=128,ept=4,vec=4,pad=0", 0.02);
    b.result(gpu, "scan", 4096, "int64", "algo=warp,block=256,ept=4,vec=4,pad=0", 0.03);
  }
  Handles h;
  ASSERT_EQ(cutune_db_open(path.c_str(), &h.db), CUTUNE_OK) << cutune_last_error();
  cutune_query q = CUTUNE_QUERY_INIT;
  q.family = "scan";
  q.device_uuid = "GPU-c";
  q.size = 4096;
  for (const char* dtype : {static_cast<const char*>(nullptr), ""}) {
    q.dtype = dtype;
    EXPECT_EQ(cutune_find(h.db, &q, &h.match), CUTUNE_ERROR) << "dtype " << (dtype ? "\"\"" : "NULL");
    EXPECT_EQ(h.match, nullptr);
    EXPECT_NE(std::string(cutune_last_error()).find("needs the element type"), std::string::npos)
        << cutune_last_error();
  }
  q.dtype = "int64";
  ASSERT_EQ(cutune_find(h.db, &q, &h.match), CUTUNE_OK) << cutune_last_error();
  EXPECT_EQ(cutune_match_level(h.match), CUTUNE_LEVEL_EXACT_DEVICE);
  EXPECT_STREQ(cutune_match_config(h.match), "algo=warp,block=256,ept=4,vec=4,pad=0");

  OneDevice one_type;
  Handles o;
  ASSERT_EQ(cutune_db_open(one_type.path.c_str(), &o.db), CUTUNE_OK);
  q.dtype = nullptr;
  ASSERT_EQ(cutune_find(o.db, &q, &o.match), CUTUNE_OK) << cutune_last_error();
  EXPECT_STREQ(cutune_match_match_key(o.match), "type=int32");
  EXPECT_EQ(cutune_match_level(o.match), CUTUNE_LEVEL_EXACT_DEVICE);
}

// The C side of lookup::arch_of: no "sm_00" for a device whose compute capability is unknown.
TEST(LookupC, ArchOfRefusesComputeCapabilitiesNoGpuHas) {
  char arch[16] = "unchanged";
  ASSERT_EQ(cutune_arch_of(9, 0, arch, sizeof arch), CUTUNE_OK) << cutune_last_error();
  EXPECT_STREQ(arch, "sm_90");
  ASSERT_EQ(cutune_arch_of(12, 0, arch, sizeof arch), CUTUNE_OK);
  EXPECT_STREQ(arch, "sm_120");
  EXPECT_EQ(cutune_arch_of(0, 0, arch, sizeof arch), CUTUNE_ERROR);
  EXPECT_NE(std::string(cutune_last_error()).find("compute capability 0.0"), std::string::npos) << cutune_last_error();
  EXPECT_EQ(cutune_arch_of(9, 10, arch, sizeof arch), CUTUNE_ERROR);
  EXPECT_EQ(cutune_arch_of(9, 0, arch, 5), CUTUNE_ERROR);  // "sm_90" needs 6 bytes
  EXPECT_NE(std::string(cutune_last_error()).find("cannot hold"), std::string::npos) << cutune_last_error();
  EXPECT_EQ(cutune_arch_of(9, 0, nullptr, 16), CUTUNE_ERROR);
  EXPECT_STREQ(arch, "sm_120");
}

// ---- the lowest-energy objective (issue 20) --------------------------------------------------------

extern "C" int c_client_lowest_energy(const char* path, const char* uuid, int64_t n, double within_fraction, char* out,
                                      size_t out_size);

namespace {

// At n = 4096 the fastest (0.010 ms, 2 J) and one 4 % slower at 1.5 J with a cubin; at n = 65536
// nothing has an energy.
struct Energies {
  TempFolder folder;
  std::string path = folder.file("energy.db");
  Energies() {
    cutune::db::Store store(path);
    ResultsBuilder b(store);
    const auto gpu = b.device("GPU-c", "C GPU", 9, 0);
    b.with_energy(gpu, "scan", 4096, "int32", "algo=lookback,block=256,ept=8,vec=4,pad=1", 0.010, 2.0, 600);
    const auto frugal =
        b.with_energy(gpu, "scan", 4096, "int32", "algo=warp,block=128,ept=4,vec=4,pad=0", 0.0104, 1.5, 450);
    b.result(gpu, "scan", 65536, "int32", "algo=warp,block=128,ept=4,vec=4,pad=0", 0.1);
    store.put_cubin({0,
                     "sm_90",
                     frugal.template_id,
                     frugal.problem_id,
                     frugal.config,
                     {0x7f, 'E', 'L', 'F', 15},
                     "[]",
                     "[]",
                     "13.0",
                     ""});
  }
};

}  // namespace

TEST(LookupC, LowestEnergyFromACProgram) {
  Energies fixture;
  char text[512] = {0};
  ASSERT_EQ(c_client_lowest_energy(fixture.path.c_str(), "GPU-c", 4096, 0.05, text, sizeof text), CUTUNE_OK)
      << cutune_last_error();
  EXPECT_STREQ(
      text,
      "fastest=algo=lookback,block=256,ept=8,vec=4,pad=1 2 J; chosen_by=1 config=algo=warp,block=128,ept=4,vec=4,"
      "pad=0 1.5 J 450 W 0.0104 ms of 0.01 ms note=");
  ASSERT_EQ(c_client_lowest_energy(fixture.path.c_str(), "GPU-c", 4096, 0.01, text, sizeof text), CUTUNE_OK);
  EXPECT_NE(std::string(text).find("chosen_by=1 config=algo=lookback"), std::string::npos) << text;
  ASSERT_EQ(c_client_lowest_energy(fixture.path.c_str(), "GPU-c", 65536, 0.05, text, sizeof text), CUTUNE_OK);
  EXPECT_NE(std::string(text).find("fastest=algo=warp,block=128,ept=4,vec=4,pad=0 nan J; chosen_by=0"),
            std::string::npos)
      << text;
  EXPECT_NE(std::string(text).find("note=no result of n=65536,type=int32 on GPU-c"), std::string::npos) << text;
}

TEST(LookupC, LowestEnergyAccessorsCubinAndBadWindows) {
  Energies fixture;
  Handles h;
  ASSERT_EQ(cutune_db_open(fixture.path.c_str(), &h.db), CUTUNE_OK) << cutune_last_error();
  cutune_query q = CUTUNE_QUERY_INIT;
  q.family = "scan";
  q.device_uuid = "GPU-c";
  q.size = 4096;
  q.dtype = "int32";
  ASSERT_EQ(cutune_find(h.db, &q, &h.match), CUTUNE_OK) << cutune_last_error();
  EXPECT_EQ(cutune_match_chosen_by(h.match), CUTUNE_OBJECTIVE_FASTEST);
  EXPECT_DOUBLE_EQ(cutune_match_energy_j(h.match), 2.0);
  EXPECT_DOUBLE_EQ(cutune_match_power_w(h.match), 600);
  EXPECT_TRUE(std::isnan(cutune_match_fastest_time_ms(h.match)));
  EXPECT_STREQ(cutune_match_objective_note(h.match), "");
  cutune_match_free(h.match);
  h.match = nullptr;
  ASSERT_EQ(cutune_find_lowest_energy(h.db, &q, 0.05, &h.match), CUTUNE_OK) << cutune_last_error();
  EXPECT_EQ(cutune_match_chosen_by(h.match), CUTUNE_OBJECTIVE_LOWEST_ENERGY);
  EXPECT_STREQ(cutune_match_config(h.match), "algo=warp,block=128,ept=4,vec=4,pad=0");
  EXPECT_DOUBLE_EQ(cutune_match_fastest_time_ms(h.match), 0.010);
  EXPECT_EQ(cutune_match_level(h.match), CUTUNE_LEVEL_EXACT_DEVICE);

  ASSERT_EQ(cutune_find_cubin_lowest_energy(h.db, &q, 0.05, "sm_90", &h.cubin), CUTUNE_OK) << cutune_last_error();
  size_t bytes = 0;
  const auto* data = static_cast<const unsigned char*>(cutune_cubin_data(h.cubin, &bytes));
  ASSERT_EQ(bytes, 5u);
  EXPECT_EQ(data[4], 15);
  cutune_cubin* none = nullptr;
  EXPECT_EQ(cutune_find_cubin(h.db, &q, "sm_90", &none), CUTUNE_NOT_FOUND) << "the fastest has no stored cubin";
  EXPECT_EQ(none, nullptr);

  cutune_match* refused = nullptr;
  for (double bad : {-0.05, static_cast<double>(NAN), static_cast<double>(INFINITY)}) {
    EXPECT_EQ(cutune_find_lowest_energy(h.db, &q, bad, &refused), CUTUNE_ERROR) << bad;
    EXPECT_EQ(refused, nullptr);
    EXPECT_NE(std::string(cutune_last_error()).find("window"), std::string::npos) << cutune_last_error();
  }
  EXPECT_EQ(cutune_find_lowest_energy(nullptr, &q, 0.05, &refused), CUTUNE_ERROR);
  EXPECT_EQ(cutune_find_cubin_lowest_energy(h.db, &q, -1, "sm_90", &none), CUTUNE_ERROR);
}
