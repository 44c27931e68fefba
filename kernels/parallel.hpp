#pragma once
// Host work over large buffers in fixed chunks on every core: generating inputs, and the CPU
// references of reductions. The chunks are fixed by the buffer's size, never by the number of
// threads, so whatever is combined per chunk (random streams, partial sums) comes out the same
// on any machine.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace cutune {

// Calls work(chunk, first, count) for each chunk [first, first + count) of [0, n), chunks of
// `chunk` elements, on up to every core; returns when all are done.
template <class F>
void for_each_chunk(std::size_t n, std::size_t chunk, F&& work) {
  const std::size_t chunks = (n + chunk - 1) / chunk;
  const auto run = [&](std::size_t c) {
    const std::size_t first = c * chunk;
    work(c, first, std::min(chunk, n - first));
  };
  const std::size_t threads = std::min<std::size_t>(chunks, std::max(1u, std::thread::hardware_concurrency()));
  if (threads <= 1) {
    for (std::size_t c = 0; c < chunks; ++c) run(c);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (std::size_t c = next++; c < chunks; c = next++) run(c);
    });
  for (auto& thread : pool) thread.join();
}

// Elements per chunk: large enough that a thread's start costs little against it.
inline constexpr std::size_t kChunk = std::size_t{1} << 16;

}  // namespace cutune
