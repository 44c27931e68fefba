#pragma once
// Whether a run stored as 'running' still has a live process behind it.
//
// A tuner killed with -9 never writes its run's end, so the row would say 'running' forever. While
// a run is live, its process holds a lock on one byte (the run's id) of a file beside the database
// ("<db>-runs"); the kernel drops the lock when the process dies, however it dies. The next run on
// the database tests the locks of the runs that still say 'running' and marks the abandoned ones
// 'interrupted' (Store::begin_run).
//
// The locks are open-file-description locks (F_OFD_SETLK): unlike POSIX record locks they belong to
// one open file, so two runs of one process hold theirs independently and closing some other
// descriptor of the file drops nothing. The database file itself is never opened here: closing
// a descriptor of it would drop SQLite's own POSIX locks in this process.
#include <cstdint>
#include <string>

namespace cutune::db {

// "<database>-runs": the file whose byte N is locked while run N is live.
std::string run_lock_path(const std::string& database_path);

// Holds run `run_id`'s lock until destroyed. Throws sql::DbError when the lock file cannot be opened
// or the byte is already locked (another live process claims the same run).
class RunLease {
 public:
  RunLease(const std::string& database_path, std::int64_t run_id);
  ~RunLease();
  RunLease(RunLease&& other) noexcept;
  RunLease& operator=(RunLease&&) = delete;
  RunLease(const RunLease&) = delete;  // one owner of the descriptor, hence of the lock
  RunLease& operator=(const RunLease&) = delete;

 private:
  int fd_ = -1;
};

// True while some process (this one included) holds run `run_id`'s lock. False when no lock file
// exists or the byte is free: the run's process is gone. True where it cannot tell (a database in
// memory, a file system without locks), so that a live run is never taken for a dead one.
bool run_is_live(const std::string& database_path, std::int64_t run_id);

}  // namespace cutune::db
