// What NVML's readings are worth on this GPU, for the energy and clock observers (evaluate.cpp):
// how long each getter takes (it runs between timed samples), and how often the total-energy
// counter and the power reading change while the GPU is busy (the energy window must span many
// updates). Read only, like the observers. Usage: nvml_probe [device ordinal]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "device.hpp"
#include "measure.hpp"
#include "nvml.hpp"

using namespace cutune;
using Clock = std::chrono::steady_clock;

template <class F>
double microseconds_per_call(F call, int calls = 2000) {
  const auto start = Clock::now();
  for (int i = 0; i < calls; ++i) (void)call();
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count() / calls;
}

// Polls `read` for `seconds`, returning the intervals (ms) between changes of its value.
template <class F>
std::vector<double> change_intervals_ms(F read, double seconds) {
  std::vector<double> intervals;
  auto last_value = read();
  auto last_change = Clock::now();
  bool first = true;
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < end) {
    const auto value = read();
    if (value != last_value) {
      const auto now = Clock::now();
      if (!first) intervals.push_back(std::chrono::duration<double, std::milli>(now - last_change).count());
      first = false;
      last_change = now;
      last_value = value;
    }
  }
  return intervals;
}

int main(int argc, char** argv) {
  const int ordinal = argc > 1 ? std::atoi(argv[1]) : 0;
  Device device(ordinal);
  std::string why;
  const auto gpu = nvml::Gpu::find(device.fingerprint().uuid, &why);
  if (!gpu) {
    std::printf("no NVML for %s: %s\n", device.fingerprint().name.c_str(), why.c_str());
    return 1;
  }
  std::printf("%s (%s)\n", device.fingerprint().name.c_str(), device.fingerprint().uuid.c_str());
  std::printf("settings: %s\n", nvml::describe(gpu->settings()).c_str());
  if (const auto range = gpu->power_limit_range_w())
    std::printf("power limit range: %.0f–%.0f W\n", range->first, range->second);
  std::printf("per call: energy %.2f µs, power %.2f µs, SM clock %.2f µs, reasons %.2f µs\n",
              microseconds_per_call([&] { return gpu->total_energy_mj(); }),
              microseconds_per_call([&] { return gpu->power_w(); }),
              microseconds_per_call([&] { return gpu->sm_clock_mhz(); }),
              microseconds_per_call([&] { return gpu->clock_event_reasons(); }));

  // Keep the GPU busy with large memsets on another thread while the readings are polled.
  const std::size_t bytes = std::size_t{1} << 30;
  DeviceBuffer buffer(bytes);
  Stream stream;
  std::atomic<bool> busy = true;
  std::thread load([&] {
    device.make_current();
    while (busy) {
      for (int i = 0; i < 8; ++i) CUTUNE_CU(cuMemsetD32Async, buffer.get(), i, bytes / 4, stream.get());
      stream.synchronize();
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  for (const bool energy : {true, false}) {
    const auto intervals = energy ? change_intervals_ms([&] { return gpu->total_energy_mj(); }, 2.0)
                                  : change_intervals_ms([&] { return gpu->power_w(); }, 2.0);
    const Measurement m = summarize(intervals);
    std::printf("%s changes while busy: %zu in 2 s, interval median %.2f ms (min %.2f, max %.2f)\n",
                energy ? "energy counter" : "power reading", intervals.size(), m.median_ms, m.min_ms, m.max_ms);
  }
  std::printf("busy: power %.1f W, SM clock %u MHz, reasons %s\n", gpu->power_w().value_or(-1),
              gpu->sm_clock_mhz().value_or(0), nvml::reason_names(gpu->clock_event_reasons().value_or(0)).c_str());
  busy = false;
  load.join();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  std::printf("idle: power %.1f W, SM clock %u MHz, reasons %s\n", gpu->power_w().value_or(-1),
              gpu->sm_clock_mhz().value_or(0), nvml::reason_names(gpu->clock_event_reasons().value_or(0)).c_str());
  return 0;
}
