// The worker protocol without a GPU: frames, message conversions, and a worker that cannot
// open its device reporting why.
#include <gtest/gtest.h>
#include <unistd.h>

#include "scan.hpp"
#include "worker.hpp"

using namespace cutune;

TEST(WorkerFrames, RoundTripThroughAPipe) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const nlohmann::json message{{"op", "evaluate"}, {"cubin", nlohmann::json::binary({1, 2, 3, 255})}, {"n", 1ll << 40}};
  write_frame(fds[1], message);
  write_frame(fds[1], {{"second", true}});
  close(fds[1]);
  EXPECT_EQ(read_frame(fds[0]), message);
  EXPECT_EQ(read_frame(fds[0])->at("second"), true);
  EXPECT_FALSE(read_frame(fds[0]));  // clean end of stream
  close(fds[0]);
}

namespace {

// An outcome with every field away from its default.
Outcome full_outcome() {
  Outcome o;
  o.status = Status::wrong_result;
  o.measurement = summarize({1.0, 3.0, 2.0});
  o.error = "tooffsets[5]: expected 1, got 2";
  o.error_index = std::int64_t{1} << 40;
  o.verify_seconds = 0.25;
  o.benchmark_seconds = 1.5;
  o.verified = false;
  o.cut_short = true;
  o.launch_json = R"([{"kernel":"k"}])";
  o.observations.energy_j = 0.125;
  o.observations.energy_method = "energy_counter";
  o.observations.throttled_samples = 0;  // an observation, not an unknown
  o.observations.remeasured = true;
  o.observations.registers = 40;
  o.observations.occupancy = 0.75;
  o.observations.compile_warnings = "warning: unused variable";
  return o;
}

// The trip through the pipe: JSON, CBOR frames, JSON, Outcome.
Outcome through_a_pipe(const Outcome& o) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  write_frame(fds[1], o);
  close(fds[1]);
  const auto frame = read_frame(fds[0]);
  close(fds[0]);
  return outcome_from_json(frame.value());
}

}  // namespace

TEST(WorkerMessages, EveryOutcomeFieldSurvivesTheTrip) {
  const Outcome o = full_outcome();
  const Outcome back = through_a_pipe(o);
  EXPECT_EQ(back.status, Status::wrong_result);
  ASSERT_TRUE(back.measurement);
  EXPECT_EQ(back.measurement->samples_ms, (std::vector<double>{1.0, 3.0, 2.0}));
  EXPECT_DOUBLE_EQ(back.measurement->median_ms, 2.0);  // summarised again on arrival
  EXPECT_DOUBLE_EQ(back.measurement->max_ms, 3.0);
  EXPECT_EQ(back.error, o.error);
  EXPECT_EQ(back.error_index, o.error_index);
  EXPECT_DOUBLE_EQ(back.verify_seconds, 0.25);
  EXPECT_DOUBLE_EQ(back.benchmark_seconds, 1.5);
  EXPECT_FALSE(back.verified);
  EXPECT_TRUE(back.cut_short);
  EXPECT_EQ(back.launch_json, o.launch_json);
  EXPECT_EQ(back.observations, o.observations);
  // The wire: the status by name, the measurement as its samples.
  const nlohmann::json wire = o;
  EXPECT_EQ(wire.at("status"), "wrong_result");
  EXPECT_EQ(wire.at("measurement"), nlohmann::json({1.0, 3.0, 2.0}));
}

TEST(WorkerMessages, WhatAnOutcomeLacksStaysLacking) {
  const Outcome back = through_a_pipe(Outcome{});
  EXPECT_EQ(back.status, Status::ok);
  EXPECT_FALSE(back.measurement);
  EXPECT_FALSE(back.error_index);
  EXPECT_TRUE(back.verified);
  EXPECT_FALSE(back.cut_short);
  EXPECT_EQ(back.observations, db::Observations{});
}

TEST(WorkerMessages, AnUnknownStatusOrAMissingFieldIsRefused) {
  nlohmann::json wire = full_outcome();
  wire["status"] = "bogus";
  try {
    outcome_from_json(wire);
    FAIL() << "an unknown status was accepted";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("GPU worker"), std::string::npos) << message;
    EXPECT_NE(message.find("unknown status 'bogus'"), std::string::npos) << message;
  }
  // A reply without its status must not read as ok.
  wire = full_outcome();
  wire.erase("status");
  EXPECT_THROW(outcome_from_json(wire), Error);
}

TEST(WorkerMessages, RequestsSurviveTheTrip) {
  EvaluateMessage evaluate{.config = "block=256,items=4",
                           .best_ms = 0.5,
                           .log = "ptxas info",
                           .cubin = nlohmann::json::binary_t({0x7f, 'E', 'L', 'F'})};
  nlohmann::json wire = evaluate;
  EXPECT_EQ(wire.at("op"), "evaluate");
  EXPECT_TRUE(wire.at("cubin").is_binary());  // raw bytes in the CBOR frame, not an array of numbers
  auto back = nlohmann::json::from_cbor(nlohmann::json::to_cbor(wire)).get<EvaluateMessage>();
  EXPECT_EQ(back.config, evaluate.config);
  EXPECT_EQ(back.best_ms, 0.5);
  EXPECT_EQ(back.log, evaluate.log);
  EXPECT_EQ(back.cubin, evaluate.cubin);
  evaluate.best_ms.reset();  // the first config of a problem has nothing to be behind
  EXPECT_FALSE(nlohmann::json(evaluate).get<EvaluateMessage>().best_ms);

  MeasureOptions measure;
  measure.min_samples = 3;
  const ProblemMessage problem{"prepare", "scan", "", ScanFamily::make_problem(1000, "int32").descriptor(), 7, measure};
  const auto problem_back =
      nlohmann::json::from_cbor(nlohmann::json::to_cbor(nlohmann::json(problem))).get<ProblemMessage>();
  EXPECT_EQ(problem_back.op, "prepare");
  EXPECT_EQ(problem_back.family, "scan");
  EXPECT_EQ(problem_back.spec, "");
  EXPECT_EQ(problem_back.problem, problem.problem);
  EXPECT_EQ(problem_back.seed, 7u);
  EXPECT_EQ(problem_back.measure.min_samples, 3);
}

TEST(WorkerMessages, MeasureOptionsSurviveTheTrip) {
  MeasureOptions m;
  m.min_samples = 3;
  m.flush_l2 = false;
  m.timeout_seconds = 2.5;
  const MeasureOptions back = nlohmann::json(m).get<MeasureOptions>();
  EXPECT_EQ(back.min_samples, 3);
  EXPECT_FALSE(back.flush_l2);
  EXPECT_DOUBLE_EQ(back.timeout_seconds, 2.5);
  // A field an older sender leaves out keeps its default.
  const MeasureOptions partial = nlohmann::json{{"min_samples", 4}}.get<MeasureOptions>();
  EXPECT_EQ(partial.min_samples, 4);
  EXPECT_EQ(partial.cut_after_samples, MeasureOptions{}.cut_after_samples);
  EXPECT_DOUBLE_EQ(partial.cut_ratio, MeasureOptions{}.cut_ratio);
}

TEST(EvaluationWorker, CompileErrorsNeedNoWorker) {
  ScanFamily scan;
  EvaluationWorker worker(0, scan, MeasureOptions{});
  const Space space = scan.space(DeviceLimits{});
  Compiled failed;
  failed.log = "error: expected a ';'";
  const Outcome o = worker.evaluate(space, space.enumerate().front(), failed);
  EXPECT_EQ(o.status, Status::compile_error);
  EXPECT_EQ(o.error, failed.log);
}

TEST(EvaluationWorker, AWorkerWithoutADeviceSaysWhy) {
  ScanFamily scan;
  EvaluationWorker worker(97, scan, MeasureOptions{});  // no machine has device 97
  worker.set_problem(ScanFamily::make_problem(1000, "int32"), 1);
  const Space space = scan.space(DeviceLimits{});
  Compiled compiled;
  compiled.ok = true;
  compiled.cubin = {'\x7f', 'E', 'L', 'F'};
  try {
    worker.evaluate(space, space.enumerate().front(), compiled);
    FAIL() << "evaluated without a device";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_TRUE(message.find("no CUDA driver") != std::string::npos ||
                message.find("no CUDA device 97") != std::string::npos)
        << message;
  }
}
