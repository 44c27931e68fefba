// Spreading a run over GPUs and processes, on whatever GPUs this machine has: two workers on one
// GPU (--devices 0,0) store what one worker stores, planted wrong variants included; shards of
// the problems tuned into their own databases (one of them killed and run again) merge into one
// database holding every problem's results.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <set>

#include "copy.hpp"
#include "core/hash.hpp"
#include "family_checks.hpp"
#include "scan.hpp"

using namespace cutune;
using namespace cutune::testing;

namespace {

// Per stored result: status, first bad index, verified, where measured.
using Stored = std::map<std::pair<std::string, std::string>, std::tuple<std::string, std::int64_t, bool, std::string>>;

Stored stored(db::Store& store, std::int64_t run_id, const std::vector<Problem>& problems) {
  Stored rows;
  std::map<std::int64_t, std::string> problem_keys;
  for (const auto& p : problems) problem_keys[store.upsert_problem(problem_record(family_named("scan"), p))] = p.key();
  for (const auto& r : store.results_of_run(run_id))
    rows[{problem_keys.at(r.problem_id), r.config}] = {r.status, r.error_index.value_or(-1), r.verified, r.measured_on};
  return rows;
}

int run_command(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST(GpuScaleOut, TwoWorkersOnOneGpuStoreWhatOneWorkerStores) {
  // Tile 2 of the look-back variant adds one too many (as in test_gpu_scan).
  const EditedFamily wrong(family_named("scan"), "finish_tile(out, n, tile_first, len, sh.block_prefix + prefix);",
                           "finish_tile(out, n, tile_first, len, sh.block_prefix + prefix + (tile == 2 ? 1 : 0));");
  const std::vector<Problem> problems{ScanFamily::make_problem(200'000, "int32"),
                                      ScanFamily::make_problem(70'001, "int32")};
  TempDb t;  // one per test: its folder is named by the test
  db::Store one_store((t.folder / "one.db").string()), two_store((t.folder / "two.db").string());
  Session one(wrong, device(), one_store, quick_session(problems));
  const SessionResult one_result = one.run();
  Session two(wrong, std::vector<Device*>{&device(), &device()}, two_store, quick_session(problems));
  const SessionResult two_result = two.run();
  EXPECT_EQ(two_result.gpus, 2);
  const Stored a = stored(one_store, one_result.run_id, problems), b = stored(two_store, two_result.run_id, problems);
  const std::size_t space = wrong.space(device().limits()).enumerate().size();
  ASSERT_EQ(a.size(), space * problems.size());
  ASSERT_EQ(b.size(), a.size()) << "every config of every problem evaluated once";
  int wrong_results = 0;
  for (const auto& [key, row] : a) {
    const auto it = b.find(key);
    ASSERT_NE(it, b.end()) << key.first << " " << key.second;
    EXPECT_EQ(it->second, row) << key.first << " " << key.second;
    wrong_results += std::get<0>(row) == "wrong_result";
    EXPECT_EQ(std::get<3>(it->second), "") << "the same GPU twice: measured on the device itself";
  }
  EXPECT_GT(wrong_results, 0);
  EXPECT_EQ(two_result.evaluated, one_result.evaluated);
}

TEST(GpuScaleOut, ShardsTunedApartMergeIntoOneDatabase) {
  TempDb t;
  const std::string tune = tune_binary();
  const std::string db = (t.folder / "rank{shard}.db").string();
  const std::string common = " --kernel copy --devices 0 --strategy brute_force --samples 3 --quiet --db " + db;
  ASSERT_EQ(run_command(tune + common + " --shard 0/2 > /dev/null"), 0);
  // Shard 1 is killed mid-run (kill -9 of a rank), then run again: it loses at most what was in flight.
  const pid_t child = fork();
  if (child == 0) {
    execl("/bin/sh", "sh", "-c", ("exec " + tune + common + " --shard 1/2 > /dev/null 2>&1").c_str(), nullptr);
    _exit(127);
  }
  usleep(2'500'000);
  kill(child, SIGKILL);  // tune itself (exec'd): its workers see their pipes close and leave
  waitpid(child, nullptr, 0);
  ASSERT_EQ(run_command(tune + common + " --shard 1/2 > /dev/null"), 0);
  const std::string rank0 = (t.folder / "rank0.db").string(), rank1 = (t.folder / "rank1.db").string();
  ASSERT_EQ(run_command(tune + " db merge " + rank1 + " --db " + rank0 + " > /dev/null"), 0);

  const CopyFamily copy;
  const auto problems = copy.problems({});
  const std::size_t space = copy.space(device().limits()).enumerate().size();
  db::Store merged(rank0);
  std::set<std::string> problem_keys;
  std::size_t results = 0;
  for (const auto& row : merged.best("copy")) problem_keys.insert(row.problem_key);
  for (const auto& p : problems) {
    const auto id = merged.upsert_problem(problem_record(copy, p));
    const auto device_id = merged.upsert_device(device().fingerprint());
    const auto template_id = merged.upsert_template("copy", content_hash(copy.source()), copy.source());
    results += merged.measured_configs(device_id, template_id, id).size();
  }
  EXPECT_EQ(problem_keys.size(), problems.size()) << "every problem has a best config after the merge";
  EXPECT_EQ(results, space * problems.size()) << "every config of every problem, once";
}
