#include "host_share.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

#include "core/hash.hpp"
#include "parallel.hpp"

namespace cutune {

namespace fs = std::filesystem;

namespace {

// A file descriptor, closed when it goes.
class OpenFile {
 public:
  explicit OpenFile(int fd) : fd_(fd) {}
  ~OpenFile() {
    if (fd_ >= 0) close(fd_);
  }
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  int fd() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_;
};

// The file's layout: a header naming the key and every buffer (which part, name, size), then the
// buffers' bytes in the header's order.
constexpr char kMagic[8] = {'C', 'U', 'T', 'U', 'N', 'E', 'H', 'S'};
constexpr std::uint32_t kFormat = 1;

struct Entry {
  std::uint8_t part = 0;  // 0: inputs, 1: expected
  std::string name;
  std::uint64_t bytes = 0;
};

void put(std::string& out, const void* data, std::size_t size) { out.append(static_cast<const char*>(data), size); }
void put_u32(std::string& out, std::uint32_t v) { put(out, &v, sizeof v); }
void put_u64(std::string& out, std::uint64_t v) { put(out, &v, sizeof v); }
void put_text(std::string& out, const std::string& text) {
  put_u32(out, static_cast<std::uint32_t>(text.size()));
  out += text;
}

std::vector<Entry> entries_of(const HostProblem& host) {
  std::vector<Entry> entries;
  for (const auto& [name, bytes] : host.inputs.all()) entries.push_back({0, name, bytes.size()});
  for (const auto& [name, bytes] : host.expected.all()) entries.push_back({1, name, bytes.size()});
  return entries;
}

std::string header_of(const std::string& key, const std::vector<Entry>& entries) {
  std::string header(kMagic, sizeof kMagic);
  put_u32(header, kFormat);
  put_text(header, key);
  put_u32(header, static_cast<std::uint32_t>(entries.size()));
  for (const Entry& e : entries) {
    put(header, &e.part, 1);
    put_text(header, e.name);
    put_u64(header, e.bytes);
  }
  put_u64(header, header.size() + sizeof(std::uint64_t));  // where the bytes start: checks the header's length
  return header;
}

// Whole-buffer I/O at an offset, in pieces on up to every core (tmpfs reads and writes are memory
// copies, and one thread moves a GiB in about a fifth of a second). `io` is pread or pwrite.
template <class Io, class Byte>
bool transfer(Io io, int fd, Byte* data, std::uint64_t bytes, std::uint64_t offset) {
  constexpr std::size_t kPiece = std::size_t{32} << 20;
  std::atomic<bool> ok{true};
  for_each_chunk(static_cast<std::size_t>(bytes), kPiece, [&](std::size_t, std::size_t first, std::size_t count) {
    for (std::size_t done = 0; done < count && ok;) {
      const ssize_t n = io(fd, data + first + done, count - done, static_cast<off_t>(offset + first + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        ok = false;
      else
        done += static_cast<std::size_t>(n);
    }
  });
  return ok;
}
bool read_at(int fd, std::byte* data, std::uint64_t bytes, std::uint64_t offset) {
  return transfer(pread, fd, data, bytes, offset);
}
bool write_at(int fd, const std::byte* data, std::uint64_t bytes, std::uint64_t offset) {
  return transfer(pwrite, fd, data, bytes, offset);
}

// The file's problem, or nullopt when it is not the key's or cannot be read whole.
std::optional<HostProblem> read_share(int fd, const std::string& key, const Problem& problem) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return std::nullopt;
  const auto file_bytes = static_cast<std::uint64_t>(st.st_size);
  // The header is small; read up to 1 MiB of it at once and parse from memory.
  std::string head(static_cast<std::size_t>(std::min<std::uint64_t>(file_bytes, 1 << 20)), '\0');
  if (!read_at(fd, reinterpret_cast<std::byte*>(head.data()), head.size(), 0)) return std::nullopt;
  std::size_t at = 0;
  const auto take = [&](void* out, std::size_t size) {
    if (at + size > head.size()) return false;
    std::memcpy(out, head.data() + at, size);
    at += size;
    return true;
  };
  const auto take_text = [&](std::string& out) {
    std::uint32_t size = 0;
    if (!take(&size, sizeof size) || at + size > head.size()) return false;
    out.assign(head.data() + at, size);
    at += size;
    return true;
  };
  char magic[sizeof kMagic];
  std::uint32_t format = 0, count = 0;
  std::string stored_key;
  if (!take(magic, sizeof magic) || std::memcmp(magic, kMagic, sizeof magic) != 0) return std::nullopt;
  if (!take(&format, sizeof format) || format != kFormat) return std::nullopt;
  if (!take_text(stored_key) || stored_key != key) return std::nullopt;
  if (!take(&count, sizeof count)) return std::nullopt;
  std::vector<Entry> entries(count);
  for (Entry& e : entries)
    if (!take(&e.part, 1) || !take_text(e.name) || !take(&e.bytes, sizeof e.bytes)) return std::nullopt;
  std::uint64_t data_at = 0;
  if (!take(&data_at, sizeof data_at) || data_at != at) return std::nullopt;
  std::uint64_t total = data_at;
  for (const Entry& e : entries) total += e.bytes;
  if (total != file_bytes) return std::nullopt;

  HostProblem host{problem, {}, {}};
  for (const Entry& e : entries) {
    auto& bytes = (e.part == 0 ? host.inputs : host.expected).at(e.name);
    bytes.resize(static_cast<std::size_t>(e.bytes));
    if (!read_at(fd, bytes.data(), e.bytes, data_at)) return std::nullopt;
    data_at += e.bytes;
  }
  return host;
}

// Leaves `host` in `file` for the other workers, whole or not at all; false where it could not.
bool write_share(const fs::path& file, const std::string& key, const HostProblem& host) {
  const std::vector<Entry> entries = entries_of(host);
  const std::string header = header_of(key, entries);
  std::uint64_t total = header.size();
  for (const Entry& e : entries) total += e.bytes;
  // Room for it, with a margin: tmpfs is memory, and a full one would fail other programs too.
  struct statvfs vfs {};
  if (statvfs(file.parent_path().c_str(), &vfs) != 0) return false;
  if (static_cast<double>(vfs.f_bavail) * static_cast<double>(vfs.f_frsize) < 1.25 * static_cast<double>(total))
    return false;

  const fs::path temporary = file.string() + ".part." + std::to_string(getpid());
  bool ok = false;
  {
    OpenFile out(open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    if (!out) return false;
    ok = ftruncate(out.fd(), static_cast<off_t>(total)) == 0 &&
         write_at(out.fd(), reinterpret_cast<const std::byte*>(header.data()), header.size(), 0);
    std::uint64_t at = header.size();
    const auto write_part = [&](const HostBuffers& buffers, std::uint8_t part) {
      for (const Entry& e : entries) {
        if (!ok || e.part != part) continue;
        ok = write_at(out.fd(), buffers.at(e.name).data(), e.bytes, at);
        at += e.bytes;
      }
    };
    write_part(host.inputs, 0);
    write_part(host.expected, 1);
  }
  std::error_code ignored;
  if (ok) ok = std::rename(temporary.c_str(), file.c_str()) == 0;
  if (!ok) fs::remove(temporary, ignored);
  return ok;
}

fs::path share_file(const std::string& folder, const std::string& key) {
  return fs::path(folder) / ("host-" + content_hash(key));
}

}  // namespace

std::optional<HostShareFolder> HostShareFolder::create(const std::string& parent) {
  std::string pattern = (fs::path(parent) / "cutune-host-XXXXXX").string();
  if (!mkdtemp(pattern.data())) return std::nullopt;
  return HostShareFolder(pattern);
}

HostShareFolder::HostShareFolder(HostShareFolder&& other) noexcept : path_(std::move(other.path_)) {
  other.path_.clear();
}

HostShareFolder::~HostShareFolder() {
  if (path_.empty()) return;
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

void HostShareFolder::forget(const std::string& problem_key) const {
  std::error_code ignored;
  const fs::path file = share_file(path_, problem_key);
  fs::remove(file, ignored);
  fs::remove(file.string() + ".lock", ignored);
}

std::string host_share_key(const Problem& problem, std::uint64_t seed) {
  return problem.descriptor().dump() + "#" + std::to_string(seed);
}

HostProblem shared_host_problem(const std::string& folder, const std::string& key, const Problem& problem,
                                const std::function<HostProblem()>& compute, bool* computed) {
  if (computed) *computed = true;
  const fs::path file = share_file(folder, key);
  // One lock per problem: its first worker holds it while computing, the others wait on it. The
  // kernel drops a dead worker's lock.
  OpenFile lock(open((file.string() + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!lock || flock(lock.fd(), LOCK_EX) != 0) return compute();  // no folder (the run ended): alone
  if (OpenFile in(open(file.c_str(), O_RDONLY | O_CLOEXEC)); in)
    if (auto host = read_share(in.fd(), key, problem)) {
      if (computed) *computed = false;
      return std::move(*host);
    }
  HostProblem host = compute();
  write_share(file, key, host);
  return host;  // the lock goes with `lock`
}

}  // namespace cutune
