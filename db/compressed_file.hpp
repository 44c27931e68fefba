#pragma once
// Whole-file text I/O that is transparent to gzip: Kernel Tuner cache files travel as .json.gz.
#include <stdexcept>
#include <string>

namespace cutune::db {

struct FileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The file's text, decompressed when it is gzip (whatever its name). Throws FileError naming the path.
std::string read_text_file(const std::string& path);

// Writes `text` (gzip-compressed when the path ends in .gz) through a temporary file renamed into
// place, so a failed write never leaves half a file. Throws FileError naming the path.
void write_text_file(const std::string& path, const std::string& text);

}  // namespace cutune::db
