#include "compressed_file.hpp"

#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>

namespace cutune::db {
namespace {

struct GzCloser {
  void operator()(gzFile file) const { gzclose(file); }
};
using GzFile = std::unique_ptr<std::remove_pointer_t<gzFile>, GzCloser>;

std::string gz_error(gzFile file) {
  int code = 0;
  const char* message = gzerror(file, &code);
  return code == Z_ERRNO ? std::strerror(errno) : message;
}

void remove_quietly(const std::string& path) {
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::string read_text_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw FileError("cannot read '" + path + "': it is a folder");
  // gzread passes a file that is not gzip through unchanged.
  GzFile file(gzopen(path.c_str(), "rb"));
  if (!file) throw FileError("cannot read '" + path + "': " + std::strerror(errno));
  std::string text;
  char buffer[1 << 16];
  while (true) {
    const int bytes = gzread(file.get(), buffer, sizeof buffer);
    if (bytes < 0) throw FileError("cannot read '" + path + "': " + gz_error(file.get()));
    if (bytes == 0) break;
    text.append(buffer, static_cast<std::size_t>(bytes));
  }
  return text;
}

void write_text_file(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp." + std::to_string(getpid());
  const bool compress = ends_with(path, ".gz");
  {
    GzFile file(gzopen(temporary.c_str(), compress ? "wb6" : "wbT"));  // T: plain, no gzip header
    if (!file) throw FileError("cannot write '" + path + "': " + std::strerror(errno));
    for (std::size_t done = 0; done < text.size();) {
      const auto chunk = static_cast<unsigned>(std::min<std::size_t>(text.size() - done, 1u << 30));
      if (gzwrite(file.get(), text.data() + done, chunk) != static_cast<int>(chunk)) {
        const std::string why = gz_error(file.get());
        remove_quietly(temporary);
        throw FileError("cannot write '" + path + "': " + why);
      }
      done += chunk;
    }
    if (gzclose(file.release()) != Z_OK) {
      remove_quietly(temporary);
      throw FileError("cannot write '" + path + "': closing failed");
    }
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    remove_quietly(temporary);
    throw FileError("cannot write '" + path + "': " + ec.message());
  }
}

}  // namespace cutune::db
