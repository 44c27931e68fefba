// Runs whose process died: a run killed with -9 must not say 'running' forever, and a live run
// must never be taken for a dead one.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "run_lease.hpp"
#include "store.hpp"
#include "temp_folder.hpp"

using namespace cutune;

namespace {

struct Ids {
  std::int64_t device, tmpl, problem;
};

Ids seed_identities(db::Store& store) {
  db::DeviceRecord d;
  d.uuid = "GPU-lease";
  d.name = "Lease GPU";
  const auto device = store.upsert_device(d);
  const auto tmpl = store.upsert_template("scan", "h", "s");
  const auto problem = store.upsert_problem({0, "scan", "n=1,type=int32", 1, "int32", "{}"});
  return {device, tmpl, problem};
}

db::RunRecord run_of(const Ids& ids) {
  return {0, "scan", ids.device, ids.tmpl, "brute_force", 1, "", "", "", "", "", ""};
}

void add_result(db::Store& store, const Ids& ids, std::int64_t run, const std::string& config) {
  db::ResultRecord r;
  r.run_id = run;
  r.device_id = ids.device;
  r.template_id = ids.tmpl;
  r.problem_id = ids.problem;
  r.config = config;
  r.config_json = "{}";
  r.status = "ok";
  r.time_ms_median = 1.0;
  r.launch_json = "[]";
  store.add_result(r);
}

std::string status_of(db::Store& store, std::int64_t run) {
  auto s = store.database().prepare("SELECT status || '|' || COALESCE(finished_at, '') FROM runs WHERE id = ?1");
  s.bind(1, run);
  EXPECT_TRUE(s.step());
  return s.column_text(0);
}

std::int64_t results_of(db::Store& store, std::int64_t run) {
  auto s = store.database().prepare("SELECT COUNT(*) FROM results WHERE run_id = ?1");
  s.bind(1, run);
  s.step();
  return s.column_int(0);
}

// A child process begins a run, stores two results and is killed with -9: it never finishes the run.
void run_and_get_killed(const std::string& path) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    db::Store store(path);
    const Ids ids = seed_identities(store);
    const auto run = store.begin_run(run_of(ids));
    add_result(store, ids, run, "algo=warp");
    add_result(store, ids, run, "algo=lookback");
    ::kill(::getpid(), SIGKILL);
    ::_exit(0);  // not reached
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

}  // namespace

TEST(RunLease, ARunKilledWithSigkillIsMarkedInterruptedByTheNextRunAndKeepsItsResults) {
  const cutune::testing::TempFolder folder;
  const std::string path = (folder.path() / "r.db").string();
  run_and_get_killed(path);

  db::Store store(path);
  EXPECT_EQ(status_of(store, 1), "running|");  // nothing has looked yet
  EXPECT_FALSE(db::run_is_live(path, 1));
  const Ids ids = seed_identities(store);
  const auto next = store.begin_run(run_of(ids));
  EXPECT_EQ(next, 2);
  const std::string killed = status_of(store, 1);
  EXPECT_EQ(killed.rfind("interrupted|20", 0), 0u) << killed;  // its end: its last result's time
  EXPECT_EQ(results_of(store, 1), 2);
  EXPECT_EQ(status_of(store, next), "running|");
  EXPECT_TRUE(db::run_is_live(path, next));
  store.finish_run(next, "finished");
  EXPECT_FALSE(db::run_is_live(path, next));
  EXPECT_EQ(status_of(store, next).rfind("finished|", 0), 0u);
}

TEST(RunLease, ALiveRunOfAnotherStoreStaysRunning) {
  const cutune::testing::TempFolder folder;
  const std::string path = (folder.path() / "r.db").string();
  db::Store first(path);
  const Ids ids = seed_identities(first);
  const auto live = first.begin_run(run_of(ids));

  // Another connection (as another process would have) begins a run and looks for abandoned ones.
  db::Store second(path);
  const auto other = second.begin_run(run_of(ids));
  EXPECT_EQ(second.mark_abandoned_runs(), 0);
  EXPECT_EQ(status_of(second, live), "running|");
  EXPECT_EQ(status_of(second, other), "running|");

  // In a child process too: the lock is the kernel's, not this process's bookkeeping.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    db::Store third(path);
    ::_exit(third.mark_abandoned_runs() == 0 && db::run_is_live(path, live) ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  first.finish_run(live, "finished");
  second.finish_run(other, "finished");
}

TEST(RunLease, ADatabaseInMemoryNeedsNoLockFile) {
  db::Store store(":memory:");
  const Ids ids = seed_identities(store);
  const auto run = store.begin_run(run_of(ids));
  EXPECT_EQ(store.mark_abandoned_runs(), 0);
  EXPECT_EQ(status_of(store, run), "running|");
  store.finish_run(run, "finished");
}
