// The host sides that a run's GPU workers share (tuner/host_share): computed once by whichever
// worker comes first, read by the others, never read half-written. The workers are processes, so
// these tests fork.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "core/hash.hpp"
#include "host_share.hpp"
#include "scan.hpp"
#include "temp_folder.hpp"

using namespace cutune;
namespace fs = std::filesystem;

namespace {

const Family& scan() { return family_named("scan"); }
// Made on first use: the family's tables are other translation units' statics.
const Problem& the_problem() {
  static const Problem problem = ScanFamily::make_problem(std::int64_t{1} << 18, "int32");
  return problem;
}
constexpr std::uint64_t kSeed = 7;

HostProblem computed_here() { return GpuEvaluator::host_problem(scan(), the_problem(), kSeed); }

// Appends a byte to `file` (O_APPEND: whole bytes from any number of processes).
void mark(const fs::path& file) {
  const int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, "x", 1), 1);
  close(fd);
}

std::uintmax_t size_or_zero(const fs::path& file) {
  std::error_code missing;
  const auto size = fs::file_size(file, missing);
  return missing ? 0 : size;
}

bool same_buffers(const HostBuffers& a, const HostBuffers& b) { return a.all() == b.all(); }

// The files a folder holds for problems, not their locks.
std::vector<fs::path> shared_files(const fs::path& folder) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(folder))
    if (entry.path().extension() != ".lock") files.push_back(entry.path());
  return files;
}

// Waits for a child and says whether it exited with 0.
bool exited_cleanly(pid_t pid) {
  int status = 0;
  return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

TEST(HostShare, TheFirstWorkerComputesAndTheOthersReadTheSameBytes) {
  const cutune::testing::TempFolder folder;
  const std::string key = host_share_key(the_problem(), kSeed);
  const fs::path computations = folder / "computations";
  const HostProblem expected = computed_here();
  ASSERT_FALSE(expected.expected.all().empty()) << "scan's reference runs on the CPU: both parts are shared";

  // Three workers at once; computing is slow, so the later ones find the first one at work.
  std::vector<pid_t> workers;
  for (int w = 0; w < 3; ++w) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      const HostProblem host = shared_host_problem(folder.string(), key, the_problem(), [&] {
        mark(computations);
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        return computed_here();
      });
      _exit(same_buffers(host.inputs, expected.inputs) && same_buffers(host.expected, expected.expected) ? 0 : 1);
    }
    workers.push_back(pid);
  }
  for (const pid_t pid : workers) EXPECT_TRUE(exited_cleanly(pid)) << "a worker got other bytes";
  EXPECT_EQ(size_or_zero(computations), 1u) << "computed once for the three";

  // A fourth, later, reads it too.
  bool computed = true;
  const HostProblem host = shared_host_problem(
      folder.string(), key, the_problem(), [] { return computed_here(); }, &computed);
  EXPECT_FALSE(computed);
  EXPECT_TRUE(same_buffers(host.inputs, expected.inputs));
  EXPECT_TRUE(same_buffers(host.expected, expected.expected));
  EXPECT_EQ(host.problem.key(), the_problem().key());
}

TEST(HostShare, AWorkerKilledWhileComputingLeavesNothingAndTheNextComputesAgain) {
  const cutune::testing::TempFolder folder;
  const std::string key = host_share_key(the_problem(), kSeed);
  const fs::path started = folder / "started";
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    shared_host_problem(folder.string(), key, the_problem(), [&]() -> HostProblem {
      mark(started);
      pause();  // killed here, holding the problem's lock
      _exit(3);
    });
    _exit(4);
  }
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (size_or_zero(started) == 0 && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_GT(size_or_zero(started), 0u) << "the worker never began computing";
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);

  bool computed = false;
  const HostProblem host = shared_host_problem(
      folder.string(), key, the_problem(), [] { return computed_here(); }, &computed);
  EXPECT_TRUE(computed) << "the killed worker left no file, and its lock went with it";
  EXPECT_TRUE(same_buffers(host.inputs, computed_here().inputs));
  shared_host_problem(
      folder.string(), key, the_problem(), [] { return computed_here(); }, &computed);
  EXPECT_FALSE(computed) << "the second worker's file is read";
}

TEST(HostShare, AFileCutShortOrOfAnotherProblemIsNotRead) {
  const cutune::testing::TempFolder folder;
  const std::string key = host_share_key(the_problem(), kSeed);
  shared_host_problem(folder.string(), key, the_problem(), [] { return computed_here(); });
  const auto files = shared_files(folder);
  ASSERT_EQ(files.size(), 1u);
  const auto whole = fs::file_size(files[0]);
  fs::resize_file(files[0], whole / 2);
  bool computed = false;
  const HostProblem host = shared_host_problem(
      folder.string(), key, the_problem(), [] { return computed_here(); }, &computed);
  EXPECT_TRUE(computed);
  EXPECT_TRUE(same_buffers(host.expected, computed_here().expected));
  EXPECT_EQ(fs::file_size(files[0]), whole) << "written whole again";

  // A file holding another problem's host side, under this problem's name (as a hash collision
  // would leave it: files are named "host-" and the key's hash), is not taken for it.
  const Problem other = ScanFamily::make_problem(std::int64_t{1} << 10, "int32");
  const std::string other_key = host_share_key(other, kSeed);
  fs::copy_file(files[0], folder / ("host-" + content_hash(other_key)));
  const HostProblem other_host = shared_host_problem(
      folder.string(), other_key, other, [&] { return GpuEvaluator::host_problem(scan(), other, kSeed); }, &computed);
  EXPECT_TRUE(computed);
  EXPECT_TRUE(same_buffers(other_host.inputs, GpuEvaluator::host_problem(scan(), other, kSeed).inputs));
}

TEST(HostShare, WithoutItsFolderAWorkerComputesAlone) {
  bool computed = false;
  const HostProblem host = shared_host_problem(
      "/nonexistent/cutune-host", host_share_key(the_problem(), kSeed), the_problem(), [] { return computed_here(); },
      &computed);
  EXPECT_TRUE(computed);
  EXPECT_TRUE(same_buffers(host.inputs, computed_here().inputs));
}

TEST(HostShareFolder, ForgetRemovesOneProblemAndTheFolderGoesWithEverythingInIt) {
  const cutune::testing::TempFolder parent;
  std::string path;
  {
    const auto share = HostShareFolder::create(parent.string());
    ASSERT_TRUE(share);
    path = share->path();
    EXPECT_EQ(fs::path(path).parent_path(), parent.path());
    const Problem other = ScanFamily::make_problem(std::int64_t{1} << 10, "int32");
    shared_host_problem(path, host_share_key(the_problem(), kSeed), the_problem(), [] { return computed_here(); });
    shared_host_problem(path, host_share_key(other, kSeed), other,
                        [&] { return GpuEvaluator::host_problem(scan(), other, kSeed); });
    ASSERT_EQ(shared_files(path).size(), 2u);
    share->forget(host_share_key(the_problem(), kSeed));
    EXPECT_EQ(shared_files(path).size(), 1u);
    bool computed = false;
    shared_host_problem(
        path, host_share_key(other, kSeed), other, [&] { return GpuEvaluator::host_problem(scan(), other, kSeed); },
        &computed);
    EXPECT_FALSE(computed) << "the other problem's file stays";
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(HostShareFolder::create((parent / "no" / "such" / "folder").string()));
}
