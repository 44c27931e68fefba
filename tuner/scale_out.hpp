#pragma once
// What `tune` takes to spread a run: GPUs of this host (--devices) and shards of the problems
// across processes started by an existing launcher (--shard: mpirun, srun, Slurm job arrays).
// Pure functions of their text and environment, so tests need no GPU and no launcher.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cutune {

// "0,2,3" or "all" (every one of `device_count`); a GPU may be named twice (two workers share it).
// Throws UsageError naming what is wrong.
std::vector<int> parse_devices(const std::string& text, int device_count);

struct Shard {
  int index = 0, count = 1;
  bool operator==(const Shard&) const = default;
};

// "I/K" with 0 <= I < K, or "auto": the launcher's rank and size from the environment, the first
// found of Open MPI's OMPI_COMM_WORLD_RANK/SIZE, MPICH's and Intel MPI's PMI_RANK/PMI_SIZE, a Slurm
// job array's SLURM_ARRAY_TASK_ID from SLURM_ARRAY_TASK_MIN over SLURM_ARRAY_TASK_COUNT, and srun's
// SLURM_PROCID/SLURM_NTASKS. `getenv` reads the environment (tests pass their own). Throws
// UsageError when the text or the environment says nothing usable.
Shard parse_shard(const std::string& text, const std::function<const char*(const char*)>& getenv);

// The problems (by index among `problems` of them) that a shard tunes: every count-th, from its
// index. Problems, not configs, are split: each shard runs whole searches, so results need no
// coordination until they are merged.
std::vector<std::size_t> shard_problems(std::size_t problems, const Shard& shard);

// A database path for a shard: "{shard}" in it becomes the shard's index (rank-local files, merged
// with `tune db merge` at the end).
std::string shard_database_path(const std::string& path, const Shard& shard);

}  // namespace cutune
