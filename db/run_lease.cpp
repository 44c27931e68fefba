#include "run_lease.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "sqlite.hpp"

namespace cutune::db {
namespace {

struct flock byte_of(std::int64_t run_id, short type) {
  struct flock lock {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  lock.l_start = static_cast<off_t>(run_id);
  lock.l_len = 1;
  lock.l_pid = 0;  // required to be 0 for open-file-description locks
  return lock;
}

}  // namespace

std::string run_lock_path(const std::string& database_path) { return database_path + "-runs"; }

RunLease::RunLease(const std::string& database_path, std::int64_t run_id) {
  const std::string path = run_lock_path(database_path);
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw sql::DbError("cannot open the run lock file '" + path + "': " + std::strerror(errno));
  struct flock lock = byte_of(run_id, F_WRLCK);
  if (::fcntl(fd_, F_OFD_SETLK, &lock) != 0) {
    const int error = errno;
    ::close(fd_);
    fd_ = -1;
    throw sql::DbError("cannot lock run " + std::to_string(run_id) + " in '" + path + "': " + std::strerror(error));
  }
}

RunLease::RunLease(RunLease&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

RunLease::~RunLease() {
  if (fd_ >= 0) ::close(fd_);  // closing the description releases its lock
}

bool run_is_live(const std::string& database_path, std::int64_t run_id) {
  // A database in memory (an older file migrated in a copy) has no lock file: it cannot tell.
  if (database_path.empty() || database_path == ":memory:") return true;
  const std::string path = run_lock_path(database_path);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;  // no run of a lock-taking cutune ever started here
  struct flock probe = byte_of(run_id, F_WRLCK);
  const int status = ::fcntl(fd, F_OFD_GETLK, &probe);
  ::close(fd);
  // A file system without locks cannot tell: count the run as live, so it is never marked wrongly.
  if (status != 0) return true;
  return probe.l_type != F_UNLCK;
}

}  // namespace cutune::db
