// The one mapping from a finished evaluation to a stored row (tuner/result_row): every field,
// rates against the problem's work and the device's copy bandwidth, failures without times, and
// results measured on another GPU of the run's model.
#include <gtest/gtest.h>

#include "result_row.hpp"

using namespace cutune;

namespace {

Space small_space() {
  Space s;
  s.labelled_axis("algo", {"a", "b"}).axis("block", {64, 128});
  return s;
}

EvaluationQueue::Finished finished_ok(const Space& space) {
  EvaluationQueue::Finished f;
  f.config = space.parse("algo=b,block=128");
  f.compile_seconds = 0.25;
  f.outcome.status = Status::ok;
  f.outcome.measurement = summarize({2.0, 1.0, 4.0});
  f.outcome.verify_seconds = 0.01;
  f.outcome.benchmark_seconds = 0.02;
  f.outcome.launch_json = R"([{"kernel":"k"}])";
  f.outcome.cut_short = true;
  f.outcome.observations.registers = 40;
  f.outcome.observations.energy_j = 0.5;
  return f;
}

}  // namespace

TEST(ResultRow, CarriesEveryFieldOfAnOkOutcome) {
  const Space space = small_space();
  const RowContext context{7, 3, 5, 11, Work{2e9, 4e9}, 1000, "GPU-a", 12.5};
  const db::ResultRecord row = result_row(space, finished_ok(space), context, "GPU-a");
  EXPECT_EQ(row.run_id, 7);
  EXPECT_EQ(row.device_id, 3);
  EXPECT_EQ(row.template_id, 5);
  EXPECT_EQ(row.problem_id, 11);
  EXPECT_EQ(row.config, "algo=b,block=128");
  EXPECT_EQ(row.config_json, space.json(space.parse("algo=b,block=128")));
  EXPECT_EQ(row.status, "ok");
  EXPECT_EQ(row.time_ms_median, 2.0);
  EXPECT_EQ(row.time_ms_min, 1.0);
  EXPECT_EQ(row.time_ms_max, 4.0);
  EXPECT_EQ(row.samples, 3);
  EXPECT_DOUBLE_EQ(*row.gbs, 1000.0);         // 2e9 bytes in 2 ms
  EXPECT_DOUBLE_EQ(*row.gflops, 2000.0);      // 4e9 flops in 2 ms
  EXPECT_DOUBLE_EQ(*row.copy_fraction, 1.0);  // of 1000 GB/s
  EXPECT_EQ(row.compile_s, 0.25);
  EXPECT_EQ(row.verify_s, 0.01);
  EXPECT_EQ(row.benchmark_s, 0.02);
  EXPECT_EQ(row.launch_json, R"([{"kernel":"k"}])");
  EXPECT_TRUE(row.cut_short);
  EXPECT_TRUE(row.verified);
  EXPECT_EQ(row.observations.registers, 40);
  EXPECT_EQ(row.observations.energy_j, 0.5);
  EXPECT_TRUE(row.measured_on.empty());  // the run's own device
  EXPECT_EQ(row.elapsed_s, 12.5);
}

TEST(ResultRow, AFailureHasNoTimesAndAnotherGpuIsNamed) {
  const Space space = small_space();
  EvaluationQueue::Finished f;
  f.config = space.parse("algo=a,block=64");
  f.outcome.status = Status::wrong_result;
  f.outcome.error = "first run: element 5 is 3, expected 4";
  f.outcome.error_index = 5;
  const RowContext context{1, 1, 1, 1, Work{1e6, 0}, 1000, "GPU-a", 0};
  const db::ResultRecord row = result_row(space, f, context, "GPU-b");
  EXPECT_EQ(row.status, "wrong_result");
  EXPECT_EQ(row.error_index, 5);
  EXPECT_EQ(row.error, "first run: element 5 is 3, expected 4");
  EXPECT_FALSE(row.time_ms_median || row.gbs || row.gflops || row.copy_fraction);
  EXPECT_EQ(row.samples, 0);
  EXPECT_EQ(row.launch_json, "[]");  // never loaded: an empty plan, not ''
  EXPECT_EQ(row.measured_on, "GPU-b");
}
