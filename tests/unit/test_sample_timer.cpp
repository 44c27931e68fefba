// The sample loop without a GPU: a clock that answers scripted times and writes down, with the
// work's callbacks, every step the loop takes, so that its order, its stopping and its cut-short
// are checked as the evaluator, the copy bandwidth and the bench rely on them.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <stdexcept>
#include <string>
#include <vector>

#include "sample_timer.hpp"

using namespace cutune;

namespace {

// Answers each sample's time from a script (repeating its last time once it runs out) and logs
// what the loop asks of it.
class ScriptedClock final : public SampleClock {
 public:
  ScriptedClock(std::vector<std::string>& log, std::deque<double> times) : log_(log), times_(std::move(times)) {}
  void start() override { log_.push_back("start"); }
  void stop() override { log_.push_back("stop"); }
  void wait() override {
    log_.push_back("wait");
    if (hang_after_waits_ >= 0 && waits_++ == hang_after_waits_) throw std::runtime_error("hung");
  }
  double elapsed_ms() override {
    const double ms = times_.front();
    if (times_.size() > 1) times_.pop_front();
    return ms;
  }
  int hang_after_waits_ = -1;  // the wait of this index (0 the first) throws, as a hung run would

 private:
  std::vector<std::string>& log_;
  std::deque<double> times_;
  int waits_ = 0;
};

// The evaluator's work: every hook set, each logging its step.
SampleWork logged_work(std::vector<std::string>& log) {
  return {.run = [&log] { log.push_back("run"); },
          .before_run = [&log] { log.push_back("restore"); },
          .flush = [&log](std::size_t index) { log.push_back("flush " + std::to_string(index)); },
          .after_sample = [&log] { log.push_back("clocks"); }};
}

const std::vector<std::string> kOneSample{"restore", "flush 0", "start", "run", "stop", "wait", "clocks"};

}  // namespace

TEST(SampleTimer, WarmUpRunsThenWaitsOnce) {
  std::vector<std::string> log;
  ScriptedClock clock(log, {1.0});
  SampleTimer timer(clock, logged_work(log));
  timer.warm_up(2);
  EXPECT_EQ(log, (std::vector<std::string>{"restore", "run", "restore", "run", "wait"}));
  log.clear();
  timer.warm_up(0);  // still waits: what was enqueued before has ended when sampling starts
  EXPECT_EQ(log, (std::vector<std::string>{"wait"}));
}

TEST(SampleTimer, EachSampleRestoresFlushesWithItsIndexAndIsTimedAlone) {
  std::vector<std::string> log;
  ScriptedClock clock(log, {3.0, 1.0, 2.0});
  SampleTimer timer(clock, logged_work(log));
  const SampleSet set = timer.sample(StoppingRule::fixed_count(3));
  EXPECT_EQ(set.samples_ms, (std::vector<double>{3.0, 1.0, 2.0}));
  EXPECT_FALSE(set.cut_short);
  std::vector<std::string> expected;
  for (int i = 0; i < 3; ++i) {
    expected.insert(expected.end(), kOneSample.begin(), kOneSample.end());
    expected[expected.size() - kOneSample.size() + 1] = "flush " + std::to_string(i);
  }
  EXPECT_EQ(log, expected);
}

TEST(SampleTimer, WithoutHooksOnlyTheRunIsTimed) {
  // The copy bandwidth's loop: nothing restored, no flush.
  std::vector<std::string> log;
  ScriptedClock clock(log, {1.0});
  SampleTimer timer(clock, {.run = [&log] { log.push_back("copy"); }});
  const SampleSet set = timer.measure(3, StoppingRule::fixed_count(20));
  EXPECT_EQ(set.samples_ms.size(), 20u);
  std::vector<std::string> expected{"copy", "copy", "copy", "wait"};
  for (int i = 0; i < 20; ++i) expected.insert(expected.end(), {"start", "copy", "stop", "wait"});
  EXPECT_EQ(log, expected);
}

TEST(SampleTimer, StopsOnceTheMeanIsKnownWellEnough) {
  std::vector<std::string> log;
  ScriptedClock clock(log, {1.0});  // steady: the minimum count is enough
  SampleTimer timer(clock, logged_work(log));
  MeasureOptions options;
  EXPECT_EQ(timer.sample(StoppingRule::from(options)).samples_ms.size(), static_cast<std::size_t>(options.min_samples));
}

TEST(SampleTimer, NoisyTimesRunToTheCountCap) {
  std::deque<double> noisy;
  for (int i = 0; i < 400; ++i) noisy.push_back(i % 2 ? 1.0 : 2.0);
  std::vector<std::string> log;
  ScriptedClock clock(log, noisy);
  SampleTimer timer(clock, logged_work(log));
  MeasureOptions options;
  options.max_samples = 40;
  const SampleSet set = timer.sample(StoppingRule::from(options));
  EXPECT_EQ(set.samples_ms.size(), 40u);
  EXPECT_FALSE(set.cut_short);
}

TEST(SampleTimer, LongRunsEndAtTheTimeCap) {
  std::vector<std::string> log;
  ScriptedClock clock(log, {400.0, 100.0});
  SampleTimer timer(clock, logged_work(log));
  MeasureOptions options;  // at most 1 s of samples
  EXPECT_EQ(timer.sample(StoppingRule::from(options)).samples_ms,
            (std::vector<double>{400.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0}));  // 1 s, under 10 samples
}

TEST(SampleTimer, AConfigClearlyBehindIsCutShortAfterItsHooks) {
  std::vector<std::string> log;
  ScriptedClock clock(log, {5.0, 2.5, 5.0, 1.0});
  SampleTimer timer(clock, logged_work(log));
  const SampleSet set = timer.sample(StoppingRule::from(MeasureOptions{}, 1.0));  // cut ratio 2, after 3 samples
  EXPECT_EQ(set.samples_ms, (std::vector<double>{5.0, 2.5, 5.0}));
  EXPECT_TRUE(set.cut_short);
  EXPECT_EQ(log.back(), "clocks");  // the last sample's clock was still read
  EXPECT_EQ(std::count(log.begin(), log.end(), "clocks"), 3);
}

TEST(SampleTimer, WithinReachOfTheBestItSamplesInFull) {
  std::vector<std::string> log;
  ScriptedClock clock(log, {5.0, 1.9, 5.0, 1.0});
  SampleTimer timer(clock, logged_work(log));
  const SampleSet set = timer.sample(StoppingRule::from(MeasureOptions{}, 1.0));
  EXPECT_FALSE(set.cut_short);
  EXPECT_GE(set.samples_ms.size(), static_cast<std::size_t>(MeasureOptions{}.min_samples));
  // A rule without a best median, or a fixed count, never cuts short.
  EXPECT_FALSE(StoppingRule::from(MeasureOptions{}).cut_short({50.0, 50.0, 50.0}));
  EXPECT_FALSE(StoppingRule::fixed_count(3).cut_short({50.0, 50.0, 50.0}));
}

TEST(SampleTimer, ASecondSetStartsAfreshWithoutWarmingUp) {
  // The evaluator's re-measure after throttling: a new set, flush indices from 0 again.
  std::vector<std::string> log;
  ScriptedClock clock(log, {1.0, 2.0, 3.0, 4.0});
  SampleTimer timer(clock, logged_work(log));
  EXPECT_EQ(timer.sample(StoppingRule::fixed_count(2)).samples_ms, (std::vector<double>{1.0, 2.0}));
  log.clear();
  EXPECT_EQ(timer.sample(StoppingRule::fixed_count(2)).samples_ms, (std::vector<double>{3.0, 4.0}));
  EXPECT_EQ(log.front(), "restore");
  EXPECT_EQ(log[1], "flush 0");
}

TEST(SampleTimer, AHungRunEndsTheLoopWithItsError) {
  std::vector<std::string> log;
  ScriptedClock clock(log, {1.0});
  clock.hang_after_waits_ = 2;  // the warm-up's wait, the first sample's, then the second sample's hangs
  SampleTimer timer(clock, logged_work(log));
  EXPECT_THROW(timer.measure(2, StoppingRule::fixed_count(5)), std::runtime_error);
  EXPECT_EQ(log.back(), "wait");
  EXPECT_EQ(std::count(log.begin(), log.end(), "clocks"), 1);  // nothing after the hung wait
}

TEST(SampleTimer, NeedsSomethingToRun) {
  std::vector<std::string> log;
  ScriptedClock clock(log, {1.0});
  EXPECT_THROW(SampleTimer(clock, SampleWork{}), Error);
}

TEST(SampleTimer, FlushBufferIsTwiceTheL2AndAtLeast16MiB) {
  EXPECT_EQ(l2_flush_bytes(50 << 20), std::size_t{100} << 20);
  EXPECT_EQ(l2_flush_bytes(0), std::size_t{16} << 20);
}
