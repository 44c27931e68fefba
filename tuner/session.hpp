#pragma once
// One tuning run: family × device × problems × strategy × budget → results in the store.
#include <array>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "budget.hpp"
#include "compile.hpp"
#include "device.hpp"
#include "family.hpp"
#include "measure.hpp"
#include "rematch.hpp"
#include "scheduler.hpp"
#include "store.hpp"
#include "strategies/strategy.hpp"
#include "tool_version.hpp"

namespace cutune {

class EvaluationWorker;

struct SessionOptions {
  std::vector<Problem> problems;
  StrategySpec strategy;
  // Start each problem's search from the family's results on other devices and problem sizes,
  // where the strategy uses a warm start and such results exist.
  bool warm_start = true;
  std::uint64_t seed = 0;
  Budget budget;  // max_evals per problem; the time limit is wall time for the whole session
  int compile_jobs = 1;
  std::string cache_folder;  // empty: no compile cache
  MeasureOptions measure;
  std::string command;   // the command line, stored with the run
  bool progress = true;  // progress line on stderr
  // Extra constraints from the user (tune --restrict), e.g. "algo == regtile": the session
  // searches only the configs of the family's space that satisfy all of them.
  std::vector<std::string> restrictions;
  // Near-tied leaders of each problem timed again at the end (rematch.hpp); rounds 0: not.
  RematchRule rematch;
};

// The family's space on this device, narrowed by the restrictions. Throws UsageError for an
// expression that does not parse, or when no config is left.
Space tuning_space(const Family& family, const DeviceLimits& limits, const std::vector<std::string>& restrictions);

// The warm start of one problem's search: the family's results (Store::family_results_by_source)
// for every (device, problem) but this search's own, configs parsed into its space. A config the
// space does not hold (another device's limits, a restriction, an older template's axes) is left out.
WarmStart warm_start_for(const Space& space, const std::vector<db::SourceResults>& elsewhere,
                         const std::string& device_uuid, const std::string& problem_key);

struct SessionResult {
  std::int64_t run_id = 0;
  std::int64_t evaluated = 0, skipped = 0;
  bool interrupted = false;  // Ctrl-C or a hung kernel ended it early; results so far are stored
  std::string stop_reason;   // why it ended early (interrupted, or a budget ran out); empty otherwise
  // Where the GPU's time went: verification and timed samples (as the evaluations report them),
  // and waiting for a config's cubin from the compile pool.
  double verify_seconds = 0, benchmark_seconds = 0, compile_wait_seconds = 0;
  // Starting the GPU worker and setting problems up (inputs, references, uploads); storing each
  // problem's best cubin and the family defaults at the end.
  double setup_seconds = 0, finishing_seconds = 0;
  // Wall seconds from the run's start until the GPUs could be given work (the run recorded, the
  // compile queue filled, the copy bandwidth measured on a new device): every GPU waits through it.
  double before_work_seconds = 0;
  double setup_host_seconds = 0;    // the workers' time on problems' host side (inputs, CPU references)
  double setup_device_seconds = 0;  // and on the GPU's side (freeing, allocating, uploading)
  // The strategy choosing each next batch, while the GPUs wait for it (wall seconds).
  double strategy_seconds = 0;
  // Lanes free with no config queued for them (between problems, or the search had none to give
  // yet); it includes the strategy's time above.
  double starved_seconds = 0;
  // The same, by what the session's thread did meanwhile (SessionActivity's order), and by
  // problem (the newest one begun at the time, in the run's order).
  std::array<double, session_activity_count> starved_by_activity{};
  std::vector<double> starved_by_problem;
  // The session's thread, the one writer and the strategy's home (wall seconds): proposing
  // (bayes_opt fits its model there), taking results in, storing results. When their sum nears the run's time, the
  // thread is what the GPUs wait for.
  double proposing_seconds = 0, observing_seconds = 0, storing_seconds = 0;
  // Fresh compiles in the pool (cache misses), their summed NVRTC seconds, and the pool's processes.
  int compiles = 0, compile_jobs = 0;
  double compile_seconds = 0;
  double wall_seconds = 0;
  int gpus = 1;  // lanes: the seconds above are summed over them (GPU-seconds)
  // The rematch of near-tied leaders (rematch.hpp): evaluations, problems rematched, problems whose
  // best config changed, and its wall seconds (problems set up again included).
  std::size_t rematch_evaluations = 0, rematch_problems = 0, rematch_changed = 0;
  double rematch_seconds = 0;
};

class Session {
 public:
  Session(const Family& family, Device& device, db::Store& store, SessionOptions options);
  // Several GPUs of one model (a GPU may be named twice: two workers share it) share the run: one
  // worker each, configs handed out by queue (tuner/scheduler), every result stored under the first
  // GPU's device with the GPU that measured it (results.measured_on). Throws UsageError when the
  // models differ.
  Session(const Family& family, std::vector<Device*> devices, db::Store& store, SessionOptions options);
  ~Session();  // waits for the GPU workers of the last run to exit (their contexts torn down)
  SessionResult run();

 private:
  const Family& family_;
  std::vector<Device*> devices_;
  Device& device_;  // the first: its device record holds the results
  db::Store& store_;
  SessionOptions options_;
  // The last run's workers, told to finish: they free their buffers and tear their CUDA contexts
  // down (0.1-0.4 s, longer with more GPUs) while the caller writes the best table and the report.
  std::vector<std::unique_ptr<EvaluationWorker>> exiting_workers_;
};

// How a problem is stored: its family, key, size, element type, descriptor and match key.
db::ProblemRecord problem_record(const Family& family, const Problem& problem);

// Table of best configs (per device and problem), as printed by `tune --best` and after a run.
void print_best_table(std::ostream& out, const std::vector<db::BestRow>& rows);

}  // namespace cutune
