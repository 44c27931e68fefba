#pragma once
// A time line of a run's phases for diagnosing where its fixed costs go (the driver's start, the
// workers' contexts, problem set-ups, the workers' exit): with CUTUNE_TRACE_PHASES set in the
// environment, `tune` and its GPU workers print "[phase] <CLOCK_MONOTONIC seconds> <pid> <what>" to
// stderr. The clock is the same for every process of the host, so the lines of the parent and its
// workers sort into one time line. Off, it costs one cached getenv.
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <unistd.h>
namespace cutune {
inline void trace_phase(const char* what) {
  static const bool on = std::getenv("CUTUNE_TRACE_PHASES") != nullptr;
  if (!on) return;
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  std::fprintf(stderr, "[phase] %.4f %d %s\n", t.tv_sec + t.tv_nsec * 1e-9, static_cast<int>(getpid()), what);
}
}  // namespace cutune
