#include "npy.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

#include "core/error.hpp"

namespace cutune {
namespace {

// Array bytes go between .npy files and device buffers unchanged, which is right only where the
// host is little-endian, as every CUDA host is (x86-64, aarch64 Linux). This is also why a
// native-order descr ('=f4', or 'f4' with no order) reads as little-endian.
static_assert(std::endian::native == std::endian::little, "the .npy reader copies little-endian data as it is");

// The element types a .npy file can hold for cutune: numpy's kind letter and size per cutune name.
struct NpyType {
  std::string_view name;
  char kind;  // 'i' signed, 'u' unsigned, 'f' IEEE float: numpy's dtype.kind
  std::size_t bytes;
};
constexpr std::array<NpyType, 10> kTypes{{{"int8", 'i', 1},
                                          {"int16", 'i', 2},
                                          {"int32", 'i', 4},
                                          {"int64", 'i', 8},
                                          {"uint8", 'u', 1},
                                          {"uint16", 'u', 2},
                                          {"uint32", 'u', 4},
                                          {"uint64", 'u', 8},
                                          {"float32", 'f', 4},
                                          {"float64", 'f', 8}}};

const NpyType* find_type(std::string_view name) {
  for (const auto& t : kTypes)
    if (t.name == name) return &t;
  return nullptr;
}

const NpyType* find_type(char kind, std::size_t bytes) {
  for (const auto& t : kTypes)
    if (t.kind == kind && t.bytes == bytes) return &t;
  return nullptr;
}

std::string type_names() {
  std::string list;
  for (const auto& t : kTypes) list += fmt::format("{}{}", list.empty() ? "" : ", ", t.name);
  return list;
}

const NpyType& known_type(const std::string& name) {
  if (const NpyType* t = find_type(name)) return *t;
  throw UsageError(fmt::format("unknown .npy element type '{}' (known: {})", name, type_names()));
}

// The start of every .npy file, then the format version as two bytes.
constexpr std::string_view kMagic{"\x93NUMPY", 6};
// numpy pads the header so that the data starts at a multiple of this, for aligned memory maps.
constexpr std::size_t kAlignment = 64;
// numpy leaves room in the header for the first dimension to grow to this many digits, so that
// appending to a file can rewrite its header in place (GROWTH_AXIS_MAX_DIGITS in numpy.lib.format).
constexpr std::size_t kGrowthDigits = 21;
// numpy.load refuses headers over 10 000 bytes by default; this is looser but still stops a
// corrupt length field from making us allocate gigabytes before the parse fails.
constexpr std::size_t kMaxHeaderBytes = std::size_t{1} << 20;
// Header text quoted in a message is cut after this many characters.
constexpr std::size_t kMaxQuoted = 160;

// `text` in single quotes for a one-line message: control and non-ASCII bytes escaped (a header
// may hold newlines, and a file that is not a .npy file anything), and long text cut short. Quotes
// inside are left as they are: the text is for reading, not for parsing back.
std::string quoted(std::string_view text) {
  std::string out = "'";
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (i == kMaxQuoted) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n')
      out += "\\n";
    else if (c < 0x20 || c >= 0x7f)
      out += fmt::format("\\x{:02x}", c);
    else
      out += static_cast<char>(c);
  }
  return out + "'";
}

// A shape as Python writes a tuple: (), (5,), (3, 4).
std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) out += fmt::format("{}{}", i ? ", " : "", shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

// The number of elements of `shape`, or nothing when a dimension is negative or the bytes of
// that many `element_bytes`-byte elements would not fit in int64 (so callers can multiply).
std::optional<std::int64_t> checked_count(const std::vector<std::int64_t>& shape, std::size_t element_bytes = 1) {
  const std::int64_t limit = std::numeric_limits<std::int64_t>::max() / static_cast<std::int64_t>(element_bytes);
  std::int64_t count = 1;
  for (const std::int64_t d : shape) {
    if (d < 0) return std::nullopt;
    if (d != 0 && count > limit / d) return std::nullopt;
    count *= d;
  }
  // A zero dimension after a huge one gives 0 above; the loop never overflowed before reaching it.
  return count;
}

[[noreturn]] void fail(const std::string& path, const std::string& what) { throw UsageError(path + ": " + what); }

// ---------------------------------------------------------------------------------------------
// The header: a Python dict literal that numpy writes with repr() and reads with
// ast.literal_eval, e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }.

// A Python literal of the kinds a header can hold (a structured dtype's descr is a list of tuples).
struct Literal {
  enum class Kind { string, integer, boolean, none, tuple, list, dict };
  Kind kind = Kind::none;
  std::string text;               // string
  std::int64_t integer = 0;       // integer
  bool boolean = false;           // boolean
  std::vector<std::string> keys;  // dict: keys[i] maps to items[i] (a header's keys are strings)
  std::vector<Literal> items;     // tuple, list, dict
};

// Python's repr() of a literal, for messages.
std::string repr(const Literal& v) {
  const auto join = [&](std::string_view open, std::string_view close) {
    std::string out(open);
    for (std::size_t i = 0; i < v.items.size(); ++i) {
      if (i) out += ", ";
      if (v.kind == Literal::Kind::dict) out += fmt::format("'{}': ", v.keys[i]);
      out += repr(v.items[i]);
    }
    if (v.kind == Literal::Kind::tuple && v.items.size() == 1) out += ",";
    return out + std::string(close);
  };
  switch (v.kind) {
    case Literal::Kind::string:
      return "'" + v.text + "'";
    case Literal::Kind::integer:
      return std::to_string(v.integer);
    case Literal::Kind::boolean:
      return v.boolean ? "True" : "False";
    case Literal::Kind::none:
      return "None";
    case Literal::Kind::tuple:
      return join("(", ")");
    case Literal::Kind::list:
      return join("[", "]");
    case Literal::Kind::dict:
      return join("{", "}");
  }
  return "?";
}

// A recursive-descent parser for the subset of Python literals above. Errors quote the header
// and the offset at which parsing stopped.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  // The whole header: one dict, then only whitespace (numpy pads with spaces and a newline).
  Literal parse() {
    skip_space();
    if (!at('{')) fail_here("expected '{'");
    Literal header = value(0);
    skip_space();
    if (pos_ != text_.size()) fail_here("unexpected text after the dictionary");
    return header;
  }

 private:
  // Deep enough for any structured dtype worth reporting; stops "((((..." from using up the stack.
  static constexpr int kMaxDepth = 32;

  [[noreturn]] void fail_here(std::string_view what) const {
    fail(path_, fmt::format("malformed .npy header: {} at offset {} of {}", what, pos_, quoted(text_)));
  }

  bool at(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  bool at_digit() const { return pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9'; }
  bool at_name_char() const {
    if (pos_ >= text_.size()) return false;
    const char c = text_[pos_];
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  }

  // Inside brackets Python allows any whitespace, newlines included.
  void skip_space() {
    while (pos_ < text_.size() && std::string_view(" \t\n\r\f\v").find(text_[pos_]) != std::string_view::npos) ++pos_;
  }

  void expect(char c) {
    skip_space();
    if (!at(c)) fail_here(fmt::format("expected '{}'", c));
    ++pos_;
  }

  Literal value(int depth) {
    if (depth > kMaxDepth) fail_here("literals nested too deeply");
    skip_space();
    if (pos_ >= text_.size()) fail_here("unexpected end");
    const char c = text_[pos_];
    if (c == '\'' || c == '"') return string_literal();
    if (c == '-' || at_digit()) return integer();
    if (c == '(') return tuple(depth);
    if (c == '[') return sequence(Literal::Kind::list, ']', depth);
    if (c == '{') return dict(depth);
    if (at_name_char()) return name();
    fail_here(fmt::format("unexpected character {}", quoted(text_.substr(pos_, 1))));
  }

  // '...' or "..." with backslash escapes; the value matters only for keys and dtype codes, so
  // an escape other than \\, \' and \" is kept as written.
  Literal string_literal() {
    const char quote = text_[pos_++];
    Literal v{.kind = Literal::Kind::string};
    while (true) {
      if (pos_ >= text_.size() || text_[pos_] == '\n') fail_here("unterminated string");
      const char c = text_[pos_++];
      if (c == quote) return v;
      if (c == '\\' && pos_ < text_.size()) {
        const char next = text_[pos_++];
        if (next != '\\' && next != '\'' && next != '"') v.text += '\\';
        v.text += next;
      } else {
        v.text += c;
      }
    }
  }

  // A decimal integer that fits int64. Python 2 wrote longs with an L ((3L, 4L)); numpy's reader
  // still accepts those in 1.0 and 2.0 files, so this does too.
  Literal integer() {
    const bool negative = at('-');
    if (negative) ++pos_;
    if (!at_digit()) fail_here("expected a digit");
    // Accumulate negatively so that INT64_MIN parses too.
    std::int64_t magnitude = 0;
    while (at_digit()) {
      const int digit = text_[pos_] - '0';
      if (magnitude < (std::numeric_limits<std::int64_t>::min() + digit) / 10) fail_here("integer too large");
      magnitude = magnitude * 10 - digit;
      ++pos_;
    }
    if (!negative && magnitude == std::numeric_limits<std::int64_t>::min()) fail_here("integer too large");
    if (at('L') || at('l')) ++pos_;
    if (at('.') || at_name_char()) fail_here("expected an integer");
    return {.kind = Literal::Kind::integer, .integer = negative ? magnitude : -magnitude};
  }

  Literal name() {
    const std::size_t start = pos_;
    while (at_name_char()) ++pos_;
    const std::string_view word = text_.substr(start, pos_ - start);
    if (word == "True" || word == "False") return {.kind = Literal::Kind::boolean, .boolean = word == "True"};
    if (word == "None") return {.kind = Literal::Kind::none};
    pos_ = start;
    fail_here(fmt::format("unknown name {}", quoted(word)));
  }

  // (), (a,), (a, b), (a, b,): and, as in Python, (a) is just a.
  Literal tuple(int depth) {
    ++pos_;
    skip_space();
    if (at(')')) {
      ++pos_;
      return {.kind = Literal::Kind::tuple};
    }
    Literal first = value(depth + 1);
    skip_space();
    if (at(')')) {
      ++pos_;
      return first;
    }
    expect(',');
    Literal rest = sequence(Literal::Kind::tuple, ')', depth, /*opened=*/true);
    rest.items.insert(rest.items.begin(), std::move(first));
    return rest;
  }

  // Items separated by commas, a trailing comma allowed, up to `close`. `opened`: the opening
  // bracket is already consumed.
  Literal sequence(Literal::Kind kind, char close, int depth, bool opened = false) {
    if (!opened) ++pos_;
    Literal v{.kind = kind};
    while (true) {
      skip_space();
      if (at(close)) break;
      v.items.push_back(value(depth + 1));
      if (!separator(close)) break;
    }
    ++pos_;
    return v;
  }

  Literal dict(int depth) {
    ++pos_;
    Literal v{.kind = Literal::Kind::dict};
    while (true) {
      skip_space();
      if (at('}')) break;
      if (!at('\'') && !at('"')) fail_here("expected a string key");
      v.keys.push_back(string_literal().text);
      expect(':');
      v.items.push_back(value(depth + 1));
      if (!separator('}')) break;
    }
    ++pos_;
    return v;
  }

  // After an item: true past a ',' (more may follow), false at `close` (left for the caller).
  bool separator(char close) {
    skip_space();
    if (at(close)) return false;
    if (pos_ >= text_.size()) fail_here("unexpected end");
    if (!at(',')) fail_here(fmt::format("expected ',' or '{}'", close));
    ++pos_;
    return true;
  }

  std::string_view text_;
  const std::string& path_;
  std::size_t pos_ = 0;
};

// What a header's descr names, for the message that refuses it; `bytes` is 0 when the code has no
// plain size.
std::string kind_description(char kind, std::size_t bytes) {
  switch (kind) {
    case 'O':
      return "Python objects";
    case 'c':
      return "complex";
    case 'U':
      return "Unicode strings";
    case 'S':
    case 'a':
      return "byte strings";
    case 'V':
      return "raw bytes or records";
    case 'M':
      return "datetimes";
    case 'm':
      return "timedeltas";
    case 'b':
    case '?':
      return "bool";
    case 'f':
      return bytes ? fmt::format("{}-byte floats", bytes) : "an unknown type code";
    case 'i':
      return bytes ? fmt::format("{}-byte signed integers", bytes) : "an unknown type code";
    case 'u':
      return bytes ? fmt::format("{}-byte unsigned integers", bytes) : "an unknown type code";
    default:
      return "an unknown type code";
  }
}

// The element type of a dtype string: an optional byte order ('<' little, '>' big, '|' not
// applicable, '=' native), a kind letter and a size in bytes, e.g. '<f4', '|u1', '=i8'.
const NpyType& descr_type(const std::string& descr, const std::string& path) {
  std::string_view code = descr;
  char order = '=';
  if (!code.empty() && std::string_view("<>|=").find(code.front()) != std::string_view::npos) {
    order = code.front();
    code.remove_prefix(1);
  }
  const char kind = code.empty() ? '\0' : code.front();
  const std::string_view size = code.empty() ? code : code.substr(1);
  std::size_t bytes = 0;
  if (!size.empty() && size.size() <= 2 && size.find_first_not_of("0123456789") == std::string_view::npos)
    for (const char c : size) bytes = bytes * 10 + static_cast<std::size_t>(c - '0');
  if (const NpyType* type = find_type(kind, bytes)) {
    // One byte has no order, and numpy itself writes '|' for it, but '>i1' is still valid.
    if (order == '>' && bytes > 1)
      fail(path, fmt::format("dtype {} is big-endian, which cutune does not read (save a.astype('<{}{}') instead)",
                             quoted(descr), kind, bytes));
    return *type;
  }
  fail(path, fmt::format("dtype {} ({}) is not supported; cutune reads {}", quoted(descr),
                         kind_description(kind, bytes), type_names()));
}

// The three fields of a header, checked as numpy.load checks them.
struct Header {
  const NpyType* type = nullptr;
  bool fortran_order = false;
  std::vector<std::int64_t> shape;
};

const NpyType& header_type(const Literal& descr, const std::string& path) {
  if (descr.kind == Literal::Kind::string) return descr_type(descr.text, path);
  if (descr.kind == Literal::Kind::list || descr.kind == Literal::Kind::dict)
    fail(path, fmt::format("structured dtype {} is not supported; cutune reads plain arrays of {}", quoted(repr(descr)),
                           type_names()));
  fail(path, fmt::format("malformed .npy header: 'descr' is {}, not a dtype string", quoted(repr(descr))));
}

std::vector<std::int64_t> header_shape(const Literal& shape, const std::string& path) {
  const auto malformed = [&] {
    fail(path, fmt::format("malformed .npy header: 'shape' is {}, not a tuple of non-negative integers",
                           quoted(repr(shape))));
  };
  if (shape.kind != Literal::Kind::tuple) malformed();
  std::vector<std::int64_t> dims;
  for (const Literal& d : shape.items) {
    if (d.kind != Literal::Kind::integer || d.integer < 0) malformed();
    dims.push_back(d.integer);
  }
  return dims;
}

Header header_fields(const Literal& dict, const std::string& path) {
  const Literal* fields[3] = {};
  static constexpr std::string_view kKeys[3] = {"descr", "fortran_order", "shape"};
  for (std::size_t i = 0; i < dict.keys.size(); ++i) {
    std::size_t k = 0;
    while (k < 3 && kKeys[k] != dict.keys[i]) ++k;
    if (k == 3)
      fail(path, fmt::format("malformed .npy header: unexpected key {} (a header holds descr, fortran_order and shape)",
                             quoted(dict.keys[i])));
    if (fields[k]) fail(path, fmt::format("malformed .npy header: key '{}' appears twice", kKeys[k]));
    fields[k] = &dict.items[i];
  }
  for (std::size_t k = 0; k < 3; ++k)
    if (!fields[k]) fail(path, fmt::format("malformed .npy header: no '{}' key", kKeys[k]));

  Header header;
  header.type = &header_type(*fields[0], path);
  if (fields[1]->kind != Literal::Kind::boolean)
    fail(path,
         fmt::format("malformed .npy header: 'fortran_order' is {}, not True or False", quoted(repr(*fields[1]))));
  header.fortran_order = fields[1]->boolean;
  header.shape = header_shape(*fields[2], path);
  return header;
}

// ---------------------------------------------------------------------------------------------
// Reading.

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};
using InputFile = std::unique_ptr<std::FILE, FileCloser>;

// Reads up to `size` bytes; fewer only at the end of the file. A read error is an error.
std::size_t read_some(std::FILE* file, void* out, std::size_t size, const std::string& path) {
  const std::size_t got = size ? std::fread(out, 1, size, file) : 0;
  if (got < size && std::ferror(file)) fail(path, fmt::format("cannot read: {}", std::strerror(errno)));
  return got;
}

// Little-endian unsigned integer of `size` bytes, as the header length is stored.
std::uint32_t read_length(std::FILE* file, std::size_t size, const std::string& path) {
  unsigned char bytes[4] = {};
  if (read_some(file, bytes, size, path) < size) fail(path, "file ends inside the .npy header length");
  std::uint32_t length = 0;
  for (std::size_t i = size; i-- > 0;) length = length << 8 | bytes[i];
  return length;
}

// The header text after the magic and version check: 1.0 stores its length in 2 bytes, 2.0 and
// 3.0 (which differ only in the header's text encoding, latin-1 or UTF-8) in 4.
std::string read_header_text(std::FILE* file, const std::string& path) {
  char preamble[8] = {};
  const std::size_t got = read_some(file, preamble, sizeof preamble, path);
  const std::string_view start(preamble, std::min(got, kMagic.size()));
  if (start.empty()) fail(path, "not a .npy file (it is empty)");
  // np.savez writes zip archives; a spec naming one by mistake deserves to be told so.
  if (start.starts_with("PK")) fail(path, "not a .npy file (it is a zip archive, as .npz files are)");
  if (start != kMagic) fail(path, fmt::format("not a .npy file (it starts with {}, not '\\x93NUMPY')", quoted(start)));
  if (got < sizeof preamble) fail(path, "file ends inside the .npy format version");
  const int major = static_cast<unsigned char>(preamble[6]), minor = static_cast<unsigned char>(preamble[7]);
  if ((major < 1 || major > 3) || minor != 0)
    fail(path, fmt::format("unsupported .npy format version {}.{} (cutune reads 1.0, 2.0 and 3.0)", major, minor));

  const std::uint32_t length = read_length(file, major == 1 ? 2 : 4, path);
  if (length > kMaxHeaderBytes)
    fail(path, fmt::format("malformed .npy header: {} bytes long (at most {} expected)", length, kMaxHeaderBytes));
  std::string text(length, '\0');
  if (read_some(file, text.data(), length, path) < length)
    fail(path, fmt::format("file ends inside the .npy header ({} bytes long)", length));
  return text;
}

// Bytes left in a regular file from the current position, or nothing for a pipe and the like.
std::optional<std::int64_t> bytes_left(std::FILE* file) {
  struct stat info {};
  const long position = std::ftell(file);
  if (position < 0 || fstat(fileno(file), &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
  return static_cast<std::int64_t>(info.st_size) - position;
}

void read_data(std::FILE* file, const std::string& path, NpyArray& array, const NpyType& type) {
  const std::int64_t need = array.element_count() * static_cast<std::int64_t>(type.bytes);
  const auto truncated = [&](std::int64_t have) {
    fail(path, fmt::format("the data is {} bytes, but shape {} of {} needs {}", have, shape_text(array.shape),
                           type.name, need));
  };
  // Checked before allocating, so that a file cut short (or a corrupt shape) fails at once.
  if (const auto left = bytes_left(file); left && *left < need) truncated(*left);
  array.data.resize(static_cast<std::size_t>(need));
  const std::size_t got = read_some(file, array.data.data(), array.data.size(), path);
  if (got < array.data.size()) truncated(static_cast<std::int64_t>(got));
}

// ---------------------------------------------------------------------------------------------
// Writing.

// A file being written, removed again unless commit() succeeds, so that a failed write never
// leaves a truncated .npy behind for a later run to read as if it were whole.
class OutputFile {
 public:
  explicit OutputFile(std::string path) : path_(std::move(path)), file_(std::fopen(path_.c_str(), "wb")) {
    if (!file_) throw Error(fmt::format("{}: cannot open for writing: {}", path_, std::strerror(errno)));
    // Only a regular file is removed on failure: never a device or pipe someone named as output.
    struct stat info {};
    regular_ = fstat(fileno(file_), &info) == 0 && S_ISREG(info.st_mode);
  }
  ~OutputFile() {
    if (!file_) return;
    std::fclose(file_);
    remove_partial();
  }
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(const void* bytes, std::size_t size) {
    if (size && std::fwrite(bytes, 1, size, file_) != size)
      throw Error(fmt::format("{}: cannot write: {}", path_, std::strerror(errno)));
  }

  // fclose flushes the buffer, so it is where a full disk shows.
  void commit() {
    if (std::fclose(std::exchange(file_, nullptr)) == 0) return;
    const int error = errno;
    remove_partial();
    throw Error(fmt::format("{}: cannot write: {}", path_, std::strerror(error)));
  }

 private:
  void remove_partial() const {
    if (regular_) std::remove(path_.c_str());
  }

  std::string path_;
  std::FILE* file_;
  bool regular_ = false;
};

// The version 1.0 header for `array`, byte for byte as numpy.save writes it (so that files compare
// and hash alike whichever wrote them): room for the first dimension to grow, then spaces and a
// newline so that the data starts at a multiple of kAlignment; numpy pads 1 to 64 bytes, never 0.
std::string header_for(const std::string& path, const NpyArray& array) {
  const NpyType* type = find_type(array.element_type);
  if (!type)
    throw Error(fmt::format("{}: cannot write element type '{}' (known: {})", path, array.element_type, type_names()));
  const auto count = checked_count(array.shape, type->bytes);
  if (!count)
    throw Error(fmt::format("{}: cannot write shape {}: a negative dimension or too many elements", path,
                            shape_text(array.shape)));
  const auto need = static_cast<std::uint64_t>(*count) * type->bytes;
  if (array.data.size() != need)
    throw Error(fmt::format("{}: {} bytes of data, but shape {} of {} needs {}", path, array.data.size(),
                            shape_text(array.shape), type->name, need));

  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                                   npy_descr(array.element_type), shape_text(array.shape));
  if (!array.shape.empty()) header.append(kGrowthDigits - std::to_string(array.shape.front()).size(), ' ');
  const std::size_t unpadded = kMagic.size() + 2 + 2 + header.size() + 1;
  header.append(kAlignment - unpadded % kAlignment, ' ');
  header += '\n';
  if (header.size() > std::numeric_limits<std::uint16_t>::max())
    throw Error(fmt::format("{}: cannot write shape of {} dimensions: the header is too long for .npy 1.0", path,
                            array.shape.size()));
  return header;
}

}  // namespace

std::int64_t NpyArray::element_count() const {
  const auto count = checked_count(shape);
  if (!count) throw Error(fmt::format("shape {} has a negative dimension or too many elements", shape_text(shape)));
  return *count;
}

std::size_t NpyArray::element_bytes() const { return known_type(element_type).bytes; }

std::string npy_descr(const std::string& element_type) {
  const NpyType& type = known_type(element_type);
  return fmt::format("{}{}{}", type.bytes == 1 ? '|' : '<', type.kind, type.bytes);
}

NpyArray read_npy(const std::string& path) {
  const InputFile file(std::fopen(path.c_str(), "rb"));
  if (!file) fail(path, fmt::format("cannot open: {}", std::strerror(errno)));
  const std::string text = read_header_text(file.get(), path);
  const Header header = header_fields(HeaderParser(text, path).parse(), path);

  NpyArray array{.element_type = std::string(header.type->name), .shape = header.shape, .data = {}};
  if (!checked_count(header.shape, header.type->bytes))
    fail(path, fmt::format("shape {} of {} is too large", shape_text(header.shape), header.type->name));
  // Fortran and C order lay the bytes out alike when at most one dimension exceeds 1, so such a
  // file (numpy writes none, other writers may) reads as it is; otherwise the data is transposed.
  const auto long_dims = std::count_if(header.shape.begin(), header.shape.end(), [](auto d) { return d > 1; });
  if (header.fortran_order && long_dims > 1 && array.element_count() > 0)
    fail(path, fmt::format("fortran_order is True for shape {}, and cutune reads C order only (save "
                           "np.ascontiguousarray(a) instead)",
                           shape_text(header.shape)));
  read_data(file.get(), path, array, *header.type);
  return array;
}

void write_npy(const std::string& path, const NpyArray& array) {
  const std::string header = header_for(path, array);
  const auto length = static_cast<std::uint16_t>(header.size());
  const unsigned char preamble[4] = {1, 0, static_cast<unsigned char>(length & 0xff),
                                     static_cast<unsigned char>(length >> 8)};
  OutputFile file(path);
  file.write(kMagic.data(), kMagic.size());
  file.write(preamble, sizeof preamble);
  file.write(header.data(), header.size());
  file.write(array.data.data(), array.data.size());
  file.commit();
}

void check_npy_fits(const NpyArray& array, const std::string& path, const std::string& buffer,
                    const std::string& element_type, std::int64_t elements) {
  if (array.element_type != element_type) {
    const NpyType* type = find_type(array.element_type);
    throw UsageError(fmt::format("{}: dtype {}{}, but buffer '{}' holds {}", path, array.element_type,
                                 type ? " (" + npy_descr(array.element_type) + ")" : "", buffer, element_type));
  }
  if (const std::int64_t count = array.element_count(); count != elements)
    throw UsageError(fmt::format("{}: {} elements (shape {}), but buffer '{}' holds {}", path, count,
                                 shape_text(array.shape), buffer, elements));
}

}  // namespace cutune
