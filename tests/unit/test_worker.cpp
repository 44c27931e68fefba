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

TEST(WorkerMessages, OutcomeSurvivesTheTrip) {
  Outcome o;
  o.status = Status::wrong_result;
  o.error = "tooffsets[5]: expected 1, got 2";
  o.error_index = 5;
  o.verify_seconds = 0.25;
  o.launch_json = R"([{"kernel":"k"}])";
  Outcome back = outcome_from_json(to_json(o));
  EXPECT_EQ(back.status, Status::wrong_result);
  EXPECT_EQ(back.error, o.error);
  EXPECT_EQ(back.error_index, 5);
  EXPECT_FALSE(back.measurement);

  o.status = Status::ok;
  o.error_index.reset();
  o.measurement = summarize({1.0, 3.0, 2.0});
  back = outcome_from_json(to_json(o));
  ASSERT_TRUE(back.measurement);
  EXPECT_DOUBLE_EQ(back.measurement->median_ms, 2.0);
  EXPECT_EQ(back.measurement->samples_ms.size(), 3u);
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
    EXPECT_TRUE(message.find("no CUDA driver") != std::string::npos || message.find("no CUDA device 97") != std::string::npos)
        << message;
  }
}
