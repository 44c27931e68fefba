// Problem identity end to end: results of problems that differ in a field other than their size
// (reduce's operator, resample's window, copy's stride) never answer each other's lookups — not
// their configs, not their plans, not their cubins — and databases stored before problems had a
// typed identity migrate to it.
#include <gtest/gtest.h>

#include <bit>
#include <limits>

#include "copy.hpp"
#include "cutune_lookup.h"
#include "lookup.hpp"
#include "problem_identity.hpp"
#include "reduce.hpp"
#include "resample.hpp"
#include "results_fixture.hpp"
#include "schema.hpp"
#include "session.hpp"

using namespace cutune;
using cutune::lookup::Level;
using cutune::testing::TempFolder;

namespace {

// The plan a result stores (as the evaluator writes launch_json): memsets and launches in order.
std::string plan_json(const Family& family, const Problem& problem, const Space& space, const Config& config) {
  nlohmann::json steps = nlohmann::json::array();
  for (const Step& step : family.plan(problem, ConfigView(space, config))) {
    if (const auto* memset = std::get_if<MemsetStep>(&step)) {
      steps.push_back(stored_step(*memset));
      continue;
    }
    const auto& l = std::get<KernelLaunch>(step);
    steps.push_back({{"kernel", l.kernel},
                     {"grid", {l.grid.x, l.grid.y, l.grid.z}},
                     {"block", {l.block.x, l.block.y, l.block.z}},
                     {"dynamic_shared_bytes", l.dynamic_shared_bytes}});
  }
  return steps.dump();
}

std::vector<unsigned char> cubin_tagged(unsigned char tag) { return {0x7f, 'E', 'L', 'F', 2, 1, 1, tag}; }

// A database of real families' problems, configs and plans, as a tuning run stores them.
class IdentityDb {
 public:
  TempFolder folder;
  std::string path = folder.file("identity.db");

  std::int64_t device(const std::string& uuid) {
    return store_.upsert_device(cutune::testing::device_record(uuid, "NVIDIA H100 80GB HBM3", 9, 0));
  }

  // One ok result; the problem's fastest config gets a cubin tagged `tag` for sm_90.
  void result(std::int64_t device_id, const Family& family, const Problem& problem, const std::string& config_text,
              double ms, unsigned char tag) {
    store_.put_problem_schema(family.name(), family.problem_schema());
    const Space space = family.space(limits_for_arch("sm_90"));
    const Config config = space.parse(config_text);
    db::ResultRecord r;
    r.template_id = store_.upsert_template(family.name(), "hash", family.source());
    r.device_id = device_id;
    r.run_id = store_.begin_run(
        {0, family.name(), device_id, r.template_id, "brute_force", 1, "", "test", "test", "", "", ""});
    r.problem_id = store_.upsert_problem(problem_record(family, problem));
    r.config = space.key(config);
    r.config_json = space.json(config);
    r.status = "ok";
    r.time_ms_median = ms;
    r.samples = 10;
    r.launch_json = plan_json(family, problem, space, config);
    store_.add_result(r);
    const auto best = store_.best_result(device_id, r.template_id, r.problem_id);
    store_.put_cubin({0, "sm_90", r.template_id, r.problem_id, best->config, cubin_tagged(tag), best->launch_json, "[]",
                      "13.0", ""});
    store_.refresh_family_defaults();
  }

  db::Store& store() { return store_; }

 private:
  db::Store store_{path};
};

lookup::Query query(const std::string& family, std::int64_t n, std::vector<lookup::Field> fields,
                    const std::string& uuid = "GPU-a") {
  return {family, {uuid, "", 9, 0}, {n, "", std::move(fields)}};
}

std::uint32_t first_memset_word(const lookup::Match& m) {
  for (const auto& step : m.steps)
    if (const auto* memset = std::get_if<lookup::Memset>(&step)) return memset->word;
  ADD_FAILURE() << "no memset in the plan of " << m.config;
  return 0;
}

const std::string kAtomic = "block=256,ept=16,vec=4,finish=shuffle,fold=1,pad=0,pass=atomic,preset=memset";
const std::string kTwoPass = "block=512,ept=64,vec=4,finish=shuffle,fold=1,pad=0,pass=twopass,preset=memset";
const std::uint32_t kInfinityWord = std::bit_cast<std::uint32_t>(std::numeric_limits<float>::infinity());

}  // namespace

TEST(LookupIdentity, ASumNeverGetsTheMinsConfigPlanOrCubin) {
  IdentityDb db;
  const ReduceFamily reduce;
  const auto a = db.device("GPU-a");
  const std::int64_t n = 1 << 20;
  // The min problem's best is faster than anything of the sum's: a match on size and type alone
  // answered a sum with the min's config, its memset to +inf and its cubin.
  db.result(a, reduce, ReduceFamily::make_problem(n, ReductionOp::min, "float32"), kAtomic, 0.010, 'm');
  db.result(a, reduce, ReduceFamily::make_problem(n, ReductionOp::min, "float32"), kTwoPass, 0.030, 'm');
  db.result(a, reduce, ReduceFamily::make_problem(n, ReductionOp::sum, "float32"), kAtomic, 0.025, 's');
  db.result(a, reduce, ReduceFamily::make_problem(n, ReductionOp::sum, "float32"), kTwoPass, 0.020, 's');

  lookup::Database results(db.path);
  const auto sum = results.find(query("reduce", n, {{"op", "sum"}}));
  EXPECT_EQ(sum->level, Level::exact_device);
  EXPECT_EQ(sum->config, kTwoPass);
  EXPECT_EQ(sum->matched_problem, "n=1048576,op=sum,type=float32");
  EXPECT_EQ(sum->match_key, "op=sum,type=float32");
  EXPECT_EQ(results.cubin(query("reduce", n, {{"op", "sum"}}), "sm_90").image, cubin_tagged('s'));

  const auto min = results.find(query("reduce", n, {{"op", "min"}}));
  EXPECT_EQ(min->config, kAtomic);
  EXPECT_EQ(first_memset_word(*min), kInfinityWord);
  EXPECT_EQ(results.cubin(query("reduce", n, {{"op", "min"}}), "sm_90").image, cubin_tagged('m'));

  // The operator left out is the declared default, sum; the type may come as a field or as dtype.
  EXPECT_EQ(results.find(query("reduce", n, {}))->config, kTwoPass);
  EXPECT_EQ(results.find({"reduce", {"GPU-a", "", 9, 0}, {n, "float32", {{"op", "min"}}}})->config, kAtomic);
  EXPECT_EQ(results.find(query("reduce", n, {{"op", "min"}, {"type", "float32"}}))->config, kAtomic);

  // Nothing of max is stored anywhere: the built-in default, and the answer says so.
  const auto max = results.find(query("reduce", n, {{"op", "max"}}));
  EXPECT_EQ(max->level, Level::builtin_default);
  EXPECT_EQ(max->match_key, "op=max,type=float32");
  EXPECT_TRUE(max->steps.empty());
}

TEST(LookupIdentity, FallbackLevelsKeepTheMatchKey) {
  IdentityDb db;
  const ReduceFamily reduce;
  const auto a = db.device("GPU-a"), b = db.device("GPU-b");
  db.result(a, reduce, ReduceFamily::make_problem(1 << 20, ReductionOp::sum, "float32"), kTwoPass, 0.02, 's');
  db.result(b, reduce, ReduceFamily::make_problem(1 << 24, ReductionOp::min, "float32"), kAtomic, 0.05, 'm');
  lookup::Database results(db.path);
  // GPU-a has sums only: its min query falls to the family default of min (from GPU-b), never to its own sum.
  const auto min = results.find({"reduce", {"GPU-unknown", "", 0, 0}, {1 << 20, "", {{"op", "min"}}}});
  EXPECT_EQ(min->level, Level::family_default);
  EXPECT_EQ(min->config, kAtomic);
  EXPECT_EQ(first_memset_word(*min), kInfinityWord);
  const auto min_on_a = results.find({"reduce", {"GPU-a", "", 0, 0}, {1 << 20, "", {{"op", "min"}}}});
  EXPECT_EQ(min_on_a->level, Level::family_default);
  EXPECT_EQ(min_on_a->device_uuid, "GPU-b");
}

TEST(LookupIdentity, ResampleWindowsAtTheSameSizeStayApart) {
  IdentityDb db;
  const ResampleFamily resample;
  const auto a = db.device("GPU-a");
  const Problem six = ResampleFamily::make_problem(384, 86400, 6, ReductionOp::mean);
  const Problem hour = ResampleFamily::make_problem(384, 86400, 3600, ReductionOp::mean);
  ASSERT_EQ(six.size(), hour.size());
  const std::string per_thread = "map=thread,block=256,wpt=2,stage=1,vec=4,pad=1";
  const std::string per_block = "map=block,block=512,wpt=1,stage=0,vec=4,pad=0";
  db.result(a, resample, six, per_thread, 1.0, '6');
  db.result(a, resample, hour, per_block, 0.9, 'h');
  lookup::Database results(db.path);
  const auto q6 = query("resample", six.size(), {{"window", "6"}});
  EXPECT_EQ(results.find(q6)->config, per_thread);
  EXPECT_EQ(results.cubin(q6, "sm_90").image, cubin_tagged('6'));
  const auto q3600 = query("resample", six.size(), {{"window", "3600"}, {"op", "mean"}});
  EXPECT_EQ(results.find(q3600)->config, per_block);
  // The other operator at the same window: nothing stored, and the level says so.
  EXPECT_EQ(results.find(query("resample", six.size(), {{"window", "6"}, {"op", "max"}}))->level,
            Level::builtin_default);
  // The window has no default: a query without it is refused, naming it.
  try {
    results.find(query("resample", six.size(), {}));
    ADD_FAILURE() << "a resample query without its window was answered";
  } catch (const lookup::Error& e) {
    EXPECT_NE(std::string(e.what()).find("'window'"), std::string::npos) << e.what();
  }
}

TEST(LookupIdentity, CopyWithAndWithoutStride) {
  IdentityDb db;
  const CopyFamily copy;
  const auto a = db.device("GPU-a");
  const std::int64_t n = 1 << 24;
  db.result(a, copy, CopyFamily::make_problem(n), "block=256,ept=16,vec=4", 0.1, 'd');
  db.result(a, copy, CopyFamily::make_problem(n, 0, 2), "block=1024,ept=1,vec=1", 0.2, '2');
  lookup::Database results(db.path);
  EXPECT_EQ(results.find(query("copy", n, {}))->config, "block=256,ept=16,vec=4");
  EXPECT_EQ(results.find(query("copy", n, {{"stride", "2"}}))->config, "block=1024,ept=1,vec=1");
  EXPECT_EQ(results.cubin(query("copy", n, {{"stride", "2"}}), "sm_90").image, cubin_tagged('2'));
  EXPECT_EQ(results.find(query("copy", n, {{"offset", "1"}}))->level, Level::builtin_default);
}

TEST(LookupIdentity, ExtentsMayGiveTheSizeAndBadFieldsAreRefused) {
  IdentityDb db;
  const CopyFamily copy;
  db.result(db.device("GPU-a"), copy, CopyFamily::make_problem(4096), "block=256,ept=4,vec=4", 0.01, 'd');
  lookup::Database results(db.path);
  EXPECT_EQ(results.find(query("copy", 0, {{"n", "4096"}}))->matched_size, 4096);
  const auto refused = [&](lookup::Query q, const std::string& part) {
    try {
      results.find(q);
      ADD_FAILURE() << "answered";
    } catch (const lookup::Error& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  refused(query("copy", 4096, {{"strid", "2"}}), "unknown problem field 'strid'");
  refused(query("copy", 4096, {{"stride", "0"}}), "at least 1");
  refused(query("copy", 4096, {{"n", "100"}}), "not the product of its extents");
  refused(query("copy", 0, {}), "positive problem size");
  refused({"copy", {"GPU-a", "", 9, 0}, {4096, "float64", {}}}, "takes one of float32");
}

// ---- existing databases ----------------------------------------------------------------------

namespace {

// A database as cutune left it at schema version 3, with reduce, powersum and an imported
// Kernel Tuner family's problems, and results of both reduce operators at one size.
void create_version_3_database(const std::string& path) {
  {
    sql::Database raw(path, sql::Database::Mode::read_write_create);
    db::migrate_to(raw, 3);
    raw.exec(R"sql(
      INSERT INTO devices VALUES (1, 'GPU-old', 'Old GPU', 9, 0, 132, 1, 1, 1, 1, 1.0, 12000, '13.0', NULL, NULL);
      INSERT INTO templates VALUES (1, 'reduce', 'h', 's', '2026-01-01T00:00:00Z');
      INSERT INTO problems VALUES (1, 'reduce', 'n=1024,op=sum,type=float32', 1024, 'float32',
                                   '{"n":1024,"op":"sum","type":"float32"}');
      INSERT INTO problems VALUES (2, 'reduce', 'n=1024,op=min,type=float32', 1024, 'float32',
                                   '{"n":1024,"op":"min","type":"float32"}');
      INSERT INTO problems VALUES (3, 'powersum', 'w=500,a=80,alphas=grid,type=float64', 500, 'float64',
                                   '{"w":500,"a":80,"alphas":"grid","type":"float64"}');
      INSERT INTO problems VALUES (4, 'convolution_kernel', 'problem_size=4096x4096', 16777216, '',
                                   '{"problem_size":[4096,4096]}');
      INSERT INTO runs VALUES (1, 'reduce', 1, 1, 'brute_force', 1, '', '', '', '2026-01-01T00:00:00Z', NULL, 'finished');
      INSERT INTO results (run_id, device_id, template_id, problem_id, config, config_json, status, time_ms_median,
                           samples, compile_s, verify_s, benchmark_s, error, launch_json, created_at, elapsed_s)
      VALUES (1, 1, 1, 1, 'pass=twopass', '{"pass":"twopass"}', 'ok', 0.5, 10, 0, 0, 0, '', '[]', '2026-01-01T00:00:00Z', 0),
             (1, 1, 1, 2, 'pass=atomic', '{"pass":"atomic"}', 'ok', 0.1, 10, 0, 0, 0, '',
              '[{"memset":"out","word":2139095040,"bytes":4,"byte_offset":0,"stream_write":false}]', '2026-01-01T00:00:00Z', 0);
      )sql");
  }
}

}  // namespace

TEST(LookupIdentity, AVersion3DatabaseMigratesToTypedIdentity) {
  TempFolder folder;
  const std::string path = folder.file("old.db");
  create_version_3_database(path);
  {
    sql::Database raw(path, sql::Database::Mode::read_only);
    ASSERT_EQ(db::schema_version(raw), 3);
  }
  db::Store store(path);
  EXPECT_EQ(db::schema_version(store.database()), db::kSchemaVersion);
  auto rows = store.database().prepare("SELECT family, key, size, match_key FROM problems ORDER BY id");
  std::vector<std::tuple<std::string, std::string, std::int64_t, std::string>> problems;
  while (rows.step())
    problems.emplace_back(rows.column_text(0), rows.column_text(1), rows.column_int(2), rows.column_text(3));
  ASSERT_EQ(problems.size(), 4u);
  EXPECT_EQ(problems[0],
            std::make_tuple("reduce", "n=1024,op=sum,type=float32", std::int64_t{1024}, "op=sum,type=float32"));
  EXPECT_EQ(std::get<3>(problems[1]), "op=min,type=float32");
  // powersum's size is now what its schema says, the product of its extents w and a.
  EXPECT_EQ(std::get<2>(problems[2]), 500 * 80);
  EXPECT_EQ(std::get<3>(problems[2]), "alphas=grid,type=float64");
  // An imported family has no schema: it matches on its (empty) element type, as before.
  EXPECT_EQ(std::get<3>(problems[3]), "");
  EXPECT_TRUE(store.problem_schema("reduce"));
  EXPECT_FALSE(store.problem_schema("convolution_kernel"));

  lookup::Database results(path);
  EXPECT_EQ(results.find({"reduce", {"GPU-old", "", 0, 0}, {1024, "float32", {{"op", "sum"}}}})->config,
            "pass=twopass");
  EXPECT_EQ(results.find({"reduce", {"GPU-old", "", 0, 0}, {1024, "float32", {{"op", "min"}}}})->config, "pass=atomic");
  EXPECT_THROW(results.find({"convolution_kernel", {"", "Old GPU", 0, 0}, {16777216, "", {{"x", "1"}}}}),
               lookup::Error);
}

TEST(LookupIdentity, TheStoreDerivesIdentityFromTheSchemaNotFromTheWriter) {
  TempFolder folder;
  db::Store store(folder.file("derive.db"));
  store.put_problem_schema("reduce", ReduceFamily::schema());
  // A writer that gets the key, size or match key wrong is overruled by the descriptor.
  const auto id = store.upsert_problem({0, "reduce", "n=5", 99, "int32", R"({"n":5,"op":"max"})", "type=int32"});
  auto s = store.database().prepare("SELECT key, size, dtype, match_key FROM problems WHERE id = ?1");
  s.bind(1, id);
  ASSERT_TRUE(s.step());
  EXPECT_EQ(s.column_text(0), "n=5,op=max,type=float32");
  EXPECT_EQ(s.column_int(1), 5);
  EXPECT_EQ(s.column_text(2), "float32");
  EXPECT_EQ(s.column_text(3), "op=max,type=float32");
  // A descriptor the schema refuses is an error, and nothing is stored.
  EXPECT_THROW(store.upsert_problem({0, "reduce", "n=5,op=avg", 5, "float32", R"({"n":5,"op":"avg"})", ""}),
               UsageError);
  auto count = store.database().prepare("SELECT COUNT(*) FROM problems");
  count.step();
  EXPECT_EQ(count.column_int(0), 1);
}

TEST(LookupIdentity, TheCApiCarriesFieldsAndChecksStructSizes) {
  IdentityDb db;
  const ReduceFamily reduce;
  const auto a = db.device("GPU-a");
  db.result(a, reduce, ReduceFamily::make_problem(4096, ReductionOp::min, "float32"), kAtomic, 0.01, 'm');
  db.result(a, reduce, ReduceFamily::make_problem(4096, ReductionOp::sum, "float32"), kTwoPass, 0.02, 's');
  cutune_db* handle = nullptr;
  ASSERT_EQ(cutune_db_open(db.path.c_str(), &handle), CUTUNE_OK) << cutune_last_error();
  EXPECT_EQ(cutune_lookup_abi_version(), CUTUNE_LOOKUP_ABI_VERSION);
  const cutune_field min_field{"op", "min"};
  cutune_query q = CUTUNE_QUERY_INIT;
  q.family = "reduce";
  q.device_uuid = "GPU-a";
  q.size = 4096;
  q.fields = &min_field;
  q.field_count = 1;
  cutune_match* match = nullptr;
  ASSERT_EQ(cutune_find(handle, &q, &match), CUTUNE_OK) << cutune_last_error();
  EXPECT_STREQ(cutune_match_config(match), kAtomic.c_str());
  EXPECT_STREQ(cutune_match_match_key(match), "op=min,type=float32");
  cutune_step step = CUTUNE_STEP_INIT;
  ASSERT_EQ(cutune_match_step(match, 0, &step), CUTUNE_OK) << cutune_last_error();
  EXPECT_EQ(step.kind, CUTUNE_STEP_MEMSET);
  EXPECT_EQ(step.memset.word, kInfinityWord);
  cutune_step short_step = CUTUNE_STEP_INIT;
  short_step.struct_size = 8;
  EXPECT_EQ(cutune_match_step(match, 0, &short_step), CUTUNE_ERROR);
  EXPECT_NE(std::string(cutune_last_error()).find("struct_size"), std::string::npos) << cutune_last_error();
  cutune_match_free(match);

  cutune_query old_layout = q;
  old_layout.struct_size = 40;  // a caller that does not start from CUTUNE_QUERY_INIT
  EXPECT_EQ(cutune_find(handle, &old_layout, &match), CUTUNE_ERROR);
  EXPECT_NE(std::string(cutune_last_error()).find("CUTUNE_QUERY_INIT"), std::string::npos) << cutune_last_error();
  const cutune_field bad{"opp", "min"};
  q.fields = &bad;
  EXPECT_EQ(cutune_find(handle, &q, &match), CUTUNE_ERROR);
  EXPECT_NE(std::string(cutune_last_error()).find("unknown problem field 'opp'"), std::string::npos)
      << cutune_last_error();
  cutune_db_close(handle);
}

// Queries are cached without their size, so the size that extents given as fields fix is checked
// on every lookup, also when the answer comes from memory.
TEST(LookupIdentity, ExtentsAsFieldsAreCheckedAgainstTheSizeOnEveryLookup) {
  IdentityDb db;
  const CopyFamily copy;
  db.result(db.device("GPU-a"), copy, CopyFamily::make_problem(4096), "block=256,ept=4,vec=4", 0.01, 'd');
  lookup::Database results(db.path);
  EXPECT_EQ(results.find(query("copy", 0, {{"n", "4096"}}))->matched_size, 4096);
  EXPECT_EQ(results.find(query("copy", 4096, {{"n", "4096"}}))->matched_size, 4096);
  try {
    results.find(query("copy", 100, {{"n", "4096"}}));
    ADD_FAILURE() << "answered";
  } catch (const lookup::Error& e) {
    EXPECT_NE(std::string(e.what()).find("not the product of its extents (4096)"), std::string::npos) << e.what();
  }
  // Other extents: another query as asked, the same answers.
  const auto m = results.find(query("copy", 0, {{"n", "8192"}}));
  EXPECT_EQ(m->matched_size, 4096);
  EXPECT_NEAR(m->size_distance, std::log(2.0), 1e-12);
}
