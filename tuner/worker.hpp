#pragma once
// GPU evaluation in a separate process. After an illegal address or a trap the CUDA driver
// refuses all further work in the process, and a hung kernel cannot be stopped from inside it;
// so the session drives a `cutune-worker` process over pipes and starts a new one whenever the
// old one faulted, hung or died. Compiles stay in the parent (and its own compile workers).
//
// Protocol: length-prefixed CBOR frames (8-byte little-endian length, then the payload) on the
// worker's stdin/stdout; its stderr is the parent's.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compile.hpp"
#include "evaluate.hpp"
#include "scheduler.hpp"

namespace cutune {

// Parent side.
class EvaluationWorker : public Lane {
 public:
  EvaluationWorker(int device_ordinal, const Family& family, MeasureOptions options);
  ~EvaluationWorker() override;
  EvaluationWorker(const EvaluationWorker&) = delete;  // owns a child process and its pipes
  EvaluationWorker& operator=(const EvaluationWorker&) = delete;

  // Starts the worker process now (else the first request does): it makes its CUDA context, the
  // slowest part of its start, while the session still sets the run up. A worker that cannot be
  // started here is tried again by that request, which reports why.
  void launch();
  // Tells the worker to exit (the end of its stdin) without waiting for it; the destructor reaps
  // it. A session closes every worker this way first, so that their CUDA teardowns (tenths of a
  // second each) overlap one another and the session's own end.
  void finish();
  // Remembered, and sent again to every replacement worker. Sent at once: the worker sets it up
  // while the first compiles run, and the first evaluate() waits for it.
  void set_problem(const Problem& problem, std::uint64_t seed) override;
  // Lets the worker compute the next problem's inputs and CPU reference on other threads while it
  // serves this problem's evaluations (once this problem is set up; nothing otherwise).
  void prepare(const Problem& next, std::uint64_t seed) override;
  Outcome evaluate(const Space& space, const Config& config, const Compiled& compiled,
                   std::optional<double> best_ms = std::nullopt) override;
  int restarts() const { return restarts_; }
  // Seconds spent starting workers and setting problems up in them (inputs, references, uploads).
  double setup_seconds() const override { return setup_seconds_; }
  // As the worker reports it: computing a problem's host side, or waiting for its preparation.
  double setup_host_seconds() const override { return setup_host_seconds_; }
  double setup_device_seconds() const override { return setup_device_seconds_; }

 private:
  void start();
  void stop(bool kill_now);
  void send(const nlohmann::json& message);
  nlohmann::json receive(double timeout_seconds);
  nlohmann::json request(const nlohmann::json& message, double timeout_seconds);
  nlohmann::json problem_message(const char* op, const Problem& problem, std::uint64_t seed) const;

  int device_ordinal_;
  const Family& family_;
  MeasureOptions options_;
  std::optional<Problem> problem_;
  std::uint64_t seed_ = 0;
  bool problem_sent_ = false;
  bool problem_pending_ = false;  // sent, its answer not read yet
  pid_t pid_ = -1;
  int to_worker_ = -1, from_worker_ = -1;
  int restarts_ = 0;
  double setup_seconds_ = 0, setup_host_seconds_ = 0, setup_device_seconds_ = 0;
  std::vector<pid_t> abandoned_;  // killed workers not yet reaped
};

// Where the worker executable is: $CUTUNE_WORKER, else cutune-worker beside the running
// program, else the build tree's.
std::string worker_executable();

// Worker side: serves requests on stdin/stdout for `device_ordinal` until stdin closes or the
// GPU becomes unusable. Returns the process exit code.
int serve_worker(int device_ordinal);

// A child process whose stdin and stdout are pipes to us (close-on-exec elsewhere); throws Error
// naming the program when it cannot be started. argv[0] is the program's path.
struct SpawnedProcess {
  pid_t pid = -1;
  int to_child = -1, from_child = -1;
};
SpawnedProcess spawn_with_pipes(const std::vector<std::string>& argv);

// Frame I/O, shared by both sides. read_frame returns nullopt on a clean end of stream.
void write_frame(int fd, const nlohmann::json& message);
std::optional<nlohmann::json> read_frame(int fd);

// ---- the messages ------------------------------------------------------------------------------
// Each struct that crosses the pipe has its fields listed once, in one NLOHMANN_DEFINE_TYPE_…
// line at the end of this file, which makes both directions of its conversion. Members that are
// not plain JSON (Status, Measurement, std::optional, db::Observations) have their own conversion,
// declared first.

// "problem": set this problem up now (its answer: {"ok", "host_seconds"}); "prepare": compute its
// host side on other threads while the current one is measured (answered at once).
struct ProblemMessage {
  std::string op;          // "problem" or "prepare"
  std::string family;      // the family's name
  std::string spec;        // a kernel spec family's file, read again by the worker; '' for a built-in
  nlohmann::json problem;  // Problem::descriptor()
  std::uint64_t seed = 0;  // of the inputs
  MeasureOptions measure;
};

// "evaluate": one config of the problem set up last; answered with its Outcome (and "exiting",
// true when the worker can do no more GPU work and leaves).
struct EvaluateMessage {
  std::string op = "evaluate";
  std::string config;             // Space::key
  std::optional<double> best_ms;  // the best median so far, for cutting losers short
  std::string log;                // the compile's: ptxas' resource report (spills) and its warnings
  nlohmann::json::binary_t cubin;
};

// A status travels by its name (core/status.hpp's table); a name no status has is refused.
void to_json(nlohmann::json& j, Status status);
void from_json(const nlohmann::json& j, Status& status);
// A measurement travels as its samples, and is summarised again on arrival.
void to_json(nlohmann::json& j, const Measurement& measurement);
void from_json(const nlohmann::json& j, Measurement& measurement);

// The worker's answer to "evaluate"; throws Error saying what in it cannot be read (an unknown
// status, a missing field).
Outcome outcome_from_json(const nlohmann::json& message);

}  // namespace cutune

// Before the field lists below, whose conversions use them.
namespace nlohmann {

// std::optional as null or its value (nlohmann/json 3.11.2 has no conversion of its own).
template <class T>
struct adl_serializer<std::optional<T>> {
  template <class Json>
  static void to_json(Json& j, const std::optional<T>& value) {
    if (value)
      j = *value;
    else
      j = nullptr;
  }
  template <class Json>
  static void from_json(const Json& j, std::optional<T>& value) {
    if (j.is_null())
      value.reset();
    else
      value = j.template get<T>();
  }
};

// Observations as db/observations.hpp converts them: their fields are listed there, once
// (kObservationFields), for the store's columns, cutune JSON and these messages alike.
template <>
struct adl_serializer<cutune::db::Observations> {
  static void to_json(json& j, const cutune::db::Observations& observations) { j = cutune::db::to_json(observations); }
  static void from_json(const json& j, cutune::db::Observations& observations) {
    observations = cutune::db::observations_from_json(j);
  }
};

}  // namespace nlohmann

namespace cutune {

// MeasureOptions: a field the sender leaves out keeps its default. The others name every field:
// both ends are one build, and a reply missing its status must not read as ok.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(MeasureOptions, warmup_runs, min_samples, max_samples,
                                                max_sample_seconds, target_relative_error, flush_l2, timeout_seconds,
                                                cut_ratio, cut_after_samples, energy_seconds)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ProblemMessage, op, family, spec, problem, seed, measure)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(EvaluateMessage, op, config, best_ms, log, cubin)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Outcome, status, measurement, error, error_index, verify_seconds, benchmark_seconds,
                                   verified, cut_short, launch_json, observations)

}  // namespace cutune
