#pragma once
// A problem's near-tied leaders timed again before its best is taken (tune run --rematch).
//
// A search keeps the fastest of many noisy measurements, and the fastest of many is biased low
// (the winner's curse): a config that won by a hair may only have met a quiet moment, a buffer
// placement or a predecessor that suited it. On an H100 the main job timed scan's striped_ld_nc
// 1024 × 16 and 256 × 32 alike at 2^23 (0.06102 ms) and kept the first; in other processes the
// first took 0.0617-0.0630 ms and the second 0.0611-0.0615 (bench/RESULTS.md, stop 37).
//
// So once every problem's search is over, the ok results within a small fraction of each
// problem's best are evaluated again (verified and timed in full, never cut short), on the
// problem's buffers set up afresh, in rounds whose order rotates so that each leader follows
// different configs. A leader's stored time becomes that of the rematch's samples pooled, which
// its selection did not bias. A round that fails is stored as the failure: a config that verified
// once and not twice is not one to ship. The session calls rematch_leaders once its searches are over.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "compile_pool.hpp"
#include "family.hpp"
#include "measure.hpp"
#include "records.hpp"
#include "result_row.hpp"
#include "scheduler.hpp"
#include "store.hpp"

namespace cutune {

struct RematchRule {
  std::size_t rounds = 2;  // evaluations of each leader; 0: no rematch
  double within = 0.02;    // leaders: ok results at most this fraction slower than the best
  std::size_t most = 4;    // at most this many rematched in one pass (the fastest)
  std::size_t passes = 3;  // a rematch can hand the lead to a result outside it: at most this many passes
};

// Of a problem's timed ok results, fastest first (Store::ranked_results), the configs to time
// again: those within `within` of the fastest, not rematched before (`rematched`), the fastest
// `most` of them. None when the window holds one result only (nothing is tied with the best), or
// when every result in it was rematched already.
std::vector<std::string> rematch_candidates(const std::vector<db::ResultRecord>& ranked, const RematchRule& rule,
                                            const std::set<std::string>& rematched);

// The order of a rematch's evaluations, as indices into its leaders: `rounds` rounds of every
// leader, each round rotated by one, so that each leader is timed after a different one.
std::vector<std::size_t> rematch_order(std::size_t leaders, std::size_t rounds);

// One measurement of a leader's rounds, their samples pooled.
Measurement pooled_measurement(const std::vector<Measurement>& rounds);

// A leader's rounds as one finished evaluation, what its row is made from: the first round that
// failed, where one did (its failure is stored), else the last round with every round's samples
// pooled and their verification and timing seconds summed. `rounds` is not empty.
EvaluationQueue::Finished merged_rounds(const std::vector<EvaluationQueue::Finished>& rounds);

// ---- the rematch of a run, on its GPUs ------------------------------------------------------------

// A tuned problem and its stored id.
struct RematchProblem {
  const Problem* problem = nullptr;
  std::int64_t problem_id = 0;
};

// What the rematch needs of the run (the session's): where it evaluates and compiles, and how its
// rows are stored.
struct RematchScope {
  const RematchRule& rule;
  Scheduler& scheduler;
  CompilePool& pool;
  db::Store& store;
  const Family& family;
  const std::string& source;
  const Space& space;
  std::string arch;
  std::uint64_t input_seed = 0;
  RowContext context;                   // the run's; problem, work and elapsed time set per row
  std::vector<std::string> lane_uuids;  // the GPU of each lane
  std::function<double()> elapsed;      // seconds since the run started
  std::function<bool()> must_stop;
};

struct RematchTally {
  std::size_t evaluations = 0, problems = 0, changed = 0;  // changed: problems whose best config changed
};

// Times each problem's near-tied leaders again, after every search is over and its results are
// in, and stores each leader's rounds as its row (merged_rounds).
RematchTally rematch_leaders(const RematchScope& scope, const std::vector<RematchProblem>& problems);

}  // namespace cutune
