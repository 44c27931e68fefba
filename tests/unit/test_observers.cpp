// The observers' rules without a GPU: which clock readings count as throttled, when samples are
// taken again, and the one codec every observation travels in (worker messages, cutune JSON).
#include <gtest/gtest.h>

#include <set>

#include <nlohmann/json.hpp>

#include "config_choice.hpp"
#include "nvml.hpp"
#include "observations.hpp"
#include "observers.hpp"

using namespace cutune;

TEST(ClockWatch, OnlyPowerAndThermalReasonsCountAsThrottled) {
  ClockWatch clocks(nullptr);
  clocks.record(1980, 0);
  clocks.record(1980, nvml::reason::gpu_idle | nvml::reason::applications_clocks_setting);  // settings, not slowdowns
  clocks.record(1755, nvml::reason::sw_power_cap);
  clocks.record(1500, nvml::reason::hw_thermal | nvml::reason::gpu_idle);
  db::Observations o;
  clocks.fill(o);
  EXPECT_EQ(o.throttled_samples, 2);
  EXPECT_EQ(o.throttle_reasons, "sw_power_cap,hw_thermal");
  EXPECT_DOUBLE_EQ(*o.sm_clock_mhz, (1980 + 1755) / 2.0);  // the median of four
  EXPECT_FALSE(clocks.mostly_throttled());                 // half is not most
}

TEST(ClockWatch, MostlyThrottledAboveHalfAndRestartForgets) {
  ClockWatch clocks(nullptr);
  clocks.record(1200, nvml::reason::hw_slowdown);
  clocks.record(1200, nvml::reason::hw_power_brake);
  clocks.record(1980, 0);
  EXPECT_TRUE(clocks.mostly_throttled());
  clocks.restart();
  EXPECT_FALSE(clocks.mostly_throttled());
  db::Observations o;
  clocks.fill(o);
  EXPECT_FALSE(o.sm_clock_mhz);  // no readings: unknown, not 0
  EXPECT_FALSE(o.throttled_samples);
}

TEST(ClockWatch, WithoutNvmlNothingIsObserved) {
  ClockWatch clocks(nullptr);
  clocks.after_sample();
  db::Observations o;
  clocks.fill(o);
  EXPECT_EQ(o, db::Observations{});
}

TEST(NvmlReasons, NamesEveryBitAndKeepsUnknownOnes) {
  EXPECT_EQ(nvml::reason_names(0), "");
  EXPECT_EQ(nvml::reason_names(nvml::reason::sw_thermal | 0x10000), "sw_thermal,0x10000");
}

TEST(Observations, JsonRoundTripLeavesUnknownOut) {
  db::Observations o;
  o.energy_j = 0.25;
  o.power_w = 512.5;
  o.energy_method = "energy_counter";
  o.energy_runs = 1088;
  o.throttled_samples = 0;  // known: none throttled
  o.spill_store_bytes = 0;
  o.registers = 32;
  o.occupancy = 0.5;
  o.remeasured = true;
  o.compile_warnings = "t.cu(2): warning #177-D";
  const nlohmann::json j = db::to_json(o);
  EXPECT_FALSE(j.contains("sm_clock_mhz"));
  EXPECT_FALSE(j.contains("throttle_reasons"));
  EXPECT_EQ(j.at("throttled_samples"), 0);
  EXPECT_EQ(db::observations_from_json(j), o);
  EXPECT_EQ(db::to_json(db::Observations{}), nlohmann::json::object());
}

TEST(Observations, AWrongTypeIsRefusedByName) {
  try {
    db::observations_from_json({{"registers", "many"}});
    FAIL() << "accepted a string for registers";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'registers'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(db::observations_from_json({{"registers", 3.5}}), std::invalid_argument);
  EXPECT_THROW(db::observations_from_json(nlohmann::json::array()), std::invalid_argument);
  EXPECT_EQ(db::observations_from_json({{"some_future_field", 1}}), db::Observations{});  // newer writers' fields
}

// Every window's choice is on the front, and only those: the cubins stored for it serve any window.
TEST(EnergyFront, HoldsExactlyWhatSomeWindowChooses) {
  using db::EnergyCandidate;
  const std::vector<EnergyCandidate> candidates{
      {1, 1.00, 0.50, "a"},          // the fastest
      {2, 1.02, 0.40, "b"},          // slower, less energy: on the front
      {3, 1.02, 0.40, "a2"},         // the same time and energy: the smaller config text wins the tie
      {4, 1.10, 0.45, "c"},          // slower and more energy than b: never chosen
      {5, 1.30, std::nullopt, "d"},  // no energy: never chosen
      {6, 1.50, 0.20, "e"},          // far slower, least energy: on the front
      {7, 0.99, std::nullopt, "f"},  // the fastest of all, unmeasured: sets the window's reference
  };
  std::vector<std::string> front;
  for (const EnergyCandidate* c : db::energy_front(candidates)) front.push_back(c->config);
  EXPECT_EQ(front, (std::vector<std::string>{"a", "a2", "e"}));
  std::set<std::string> chosen;
  for (double within = 0; within <= 0.6; within += 0.001)
    if (const EnergyCandidate* c = db::lowest_energy(candidates, within)) chosen.insert(c->config);
  EXPECT_EQ(chosen, std::set<std::string>(front.begin(), front.end()));
  EXPECT_TRUE(db::energy_front({{1, 1.0, std::nullopt, "x"}}).empty());
}
