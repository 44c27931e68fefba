// The .npy reader and writer: round trips, headers as numpy and other writers produce them, every
// refusal as one line naming the file, and (where numpy is installed) files numpy wrote and read.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "npy.hpp"
#include "temp_folder.hpp"

using namespace cutune;
using cutune::testing::TempFolder;

namespace {

const std::vector<std::string> kTypes{"int8",   "int16",  "int32",  "int64",   "uint8",
                                      "uint16", "uint32", "uint64", "float32", "float64"};

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

// A .npy file by hand: magic, version, the header's length in 2 bytes (1.0) or 4 (2.0, 3.0),
// the header as given, then the data.
std::string npy_file(int major, std::string_view header, std::string_view data = {}, int minor = 0) {
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += static_cast<char>(minor);
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  for (std::size_t i = 0; i < length_bytes; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  out += header;
  out += data;
  return out;
}

// memcpy wrapped because an empty vector's data() may be null, which memcpy must not be given.
void copy_bytes(void* to, const void* from, std::size_t size) {
  if (size) std::memcpy(to, from, size);
}

template <class T>
std::string raw(const std::vector<T>& values) {
  std::string out(values.size() * sizeof(T), '\0');
  copy_bytes(out.data(), values.data(), out.size());
  return out;
}

template <class T>
std::vector<T> values_of(const NpyArray& array) {
  EXPECT_EQ(array.data.size() % sizeof(T), 0u);
  std::vector<T> out(array.data.size() / sizeof(T));
  copy_bytes(out.data(), array.data.data(), array.data.size());
  return out;
}

template <class T>
NpyArray array_of(const std::string& type, std::vector<std::int64_t> shape, const std::vector<T>& values) {
  NpyArray a{type, std::move(shape), std::vector<std::byte>(values.size() * sizeof(T))};
  copy_bytes(a.data.data(), values.data(), a.data.size());
  return a;
}

// 0, 1, 2, ... of `type` (all exact in every type), laid out in C order for `shape`.
NpyArray counting(const std::string& type, std::vector<std::int64_t> shape) {
  NpyArray a{type, std::move(shape), {}};
  const auto fill = [&]<class T>(T) {
    std::vector<T> values(static_cast<std::size_t>(a.element_count()));
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<T>(i);
    a.data.resize(values.size() * sizeof(T));
    copy_bytes(a.data.data(), values.data(), a.data.size());
  };
  if (type == "int8")
    fill(std::int8_t{});
  else if (type == "int16")
    fill(std::int16_t{});
  else if (type == "int32")
    fill(std::int32_t{});
  else if (type == "int64")
    fill(std::int64_t{});
  else if (type == "uint8")
    fill(std::uint8_t{});
  else if (type == "uint16")
    fill(std::uint16_t{});
  else if (type == "uint32")
    fill(std::uint32_t{});
  else if (type == "uint64")
    fill(std::uint64_t{});
  else if (type == "float32")
    fill(float{});
  else if (type == "float64")
    fill(double{});
  else
    ADD_FAILURE() << type;
  return a;
}

// The message of the UsageError that `call` throws; a test failure when it throws none.
std::string usage_error(const std::function<void()>& call) {
  try {
    call();
  } catch (const UsageError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a UsageError: " << e.what();
    return {};
  }
  ADD_FAILURE() << "no error";
  return {};
}

// Writes `bytes` to `name` and expects read_npy to refuse it in one line naming the file and
// containing `expected`.
void expect_refused(const TempFolder& dir, const std::string& name, std::string_view bytes,
                    const std::string& expected) {
  SCOPED_TRACE(name);
  const std::string path = dir.file(name);
  write_bytes(path, bytes);
  const std::string message = usage_error([&] { read_npy(path); });
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find(expected), std::string::npos) << message;
}

std::string header(std::string_view descr, std::string_view shape, std::string_view fortran = "False") {
  return "{'descr': " + std::string(descr) + ", 'fortran_order': " + std::string(fortran) +
         ", 'shape': " + std::string(shape) + ", }\n";
}

}  // namespace

TEST(NpyDescr, NamesEveryTypeAndRefusesOthers) {
  EXPECT_EQ(npy_descr("float32"), "<f4");
  EXPECT_EQ(npy_descr("float64"), "<f8");
  EXPECT_EQ(npy_descr("int32"), "<i4");
  EXPECT_EQ(npy_descr("uint32"), "<u4");
  EXPECT_EQ(npy_descr("int64"), "<i8");
  EXPECT_EQ(npy_descr("uint64"), "<u8");
  EXPECT_EQ(npy_descr("int8"), "|i1");
  EXPECT_EQ(npy_descr("uint8"), "|u1");
  EXPECT_EQ(npy_descr("int16"), "<i2");
  EXPECT_EQ(npy_descr("uint16"), "<u2");
  EXPECT_THROW(npy_descr("float16"), UsageError);
  EXPECT_THROW(npy_descr("<f4"), UsageError);
}

TEST(NpyArray, CountsElementsAndBytes) {
  EXPECT_EQ((NpyArray{"float32", {}, {}}.element_count()), 1);
  EXPECT_EQ((NpyArray{"float32", {0}, {}}.element_count()), 0);
  EXPECT_EQ((NpyArray{"float32", {3, 4}, {}}.element_count()), 12);
  EXPECT_EQ((NpyArray{"float64", {3, 4}, {}}.element_bytes()), 8u);
  EXPECT_EQ((NpyArray{"uint8", {}, {}}.element_bytes()), 1u);
  EXPECT_THROW((NpyArray{"float32", {3, -1}, {}}.element_count()), Error);
  EXPECT_THROW((NpyArray{"float32", {1ll << 40, 1ll << 40}, {}}.element_count()), Error);
  EXPECT_THROW((NpyArray{"half", {}, {}}.element_bytes()), UsageError);
}

TEST(NpyRoundTrip, EveryTypeAndShape) {
  const TempFolder dir;
  for (const auto& type : kTypes)
    for (const std::vector<std::int64_t>& shape : {std::vector<std::int64_t>{}, {5}, {3, 4}}) {
      const NpyArray written = counting(type, shape);
      const std::string path = dir.file(type + "-" + std::to_string(shape.size()) + ".npy");
      write_npy(path, written);
      const NpyArray read = read_npy(path);
      SCOPED_TRACE(path);
      EXPECT_EQ(read.element_type, type);
      EXPECT_EQ(read.shape, shape);
      EXPECT_EQ(read.data, written.data);
    }
}

TEST(NpyRoundTrip, KeepsValuesBitForBit) {
  const TempFolder dir;
  const std::vector<double> values{0.0, -0.0, 1.0 / 3, -1e300, 5e-324, std::numeric_limits<double>::infinity()};
  write_npy(dir.file("d.npy"), array_of("float64", {2, 3}, values));
  EXPECT_EQ(raw(values_of<double>(read_npy(dir.file("d.npy")))), raw(values));
  const std::vector<std::int64_t> extremes{std::numeric_limits<std::int64_t>::min(), -1, 0,
                                           std::numeric_limits<std::int64_t>::max()};
  write_npy(dir.file("i.npy"), array_of("int64", {4}, extremes));
  EXPECT_EQ(values_of<std::int64_t>(read_npy(dir.file("i.npy"))), extremes);
}

TEST(NpyWrite, WritesNumpysVersionOneLayout) {
  const TempFolder dir;
  write_npy(dir.file("a.npy"), counting("float32", {3, 4}));
  const std::string bytes = file_bytes(dir.file("a.npy"));
  ASSERT_GE(bytes.size(), 10u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const std::size_t length = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
  // numpy's own text, padded so that the data starts at byte 128.
  EXPECT_EQ(10 + length, 128u);
  const std::string text = bytes.substr(10, length);
  EXPECT_EQ(text.substr(0, 59), "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }");
  EXPECT_EQ(text.find_first_not_of(' ', 59), length - 1);
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(bytes.size(), 128u + 12 * 4);

  for (const std::vector<std::int64_t>& shape : {std::vector<std::int64_t>{}, {5}, {0}, {2, 3, 4, 5, 6, 7, 8}}) {
    write_npy(dir.file("b.npy"), counting("uint8", shape));
    const std::string b = file_bytes(dir.file("b.npy"));
    const std::size_t offset = 10 + (static_cast<unsigned char>(b[8]) | static_cast<unsigned char>(b[9]) << 8);
    EXPECT_EQ(offset % 64, 0u);
    EXPECT_EQ(b.size(), offset + static_cast<std::size_t>(NpyArray{"uint8", shape, {}}.element_count()));
  }
  EXPECT_NE(file_bytes(dir.file("b.npy")).find("'shape': (2, 3, 4, 5, 6, 7, 8), }"), std::string::npos);
  write_npy(dir.file("c.npy"), counting("int16", {5}));
  EXPECT_NE(file_bytes(dir.file("c.npy")).find("{'descr': '<i2', 'fortran_order': False, 'shape': (5,), }"),
            std::string::npos);
  write_npy(dir.file("d.npy"), counting("int8", {}));
  EXPECT_NE(file_bytes(dir.file("d.npy")).find("{'descr': '|i1', 'fortran_order': False, 'shape': (), }"),
            std::string::npos);
}

TEST(NpyWrite, RefusesInconsistentArraysAndUnwritablePaths) {
  const TempFolder dir;
  const auto message = [](const NpyArray& a, const std::string& path) {
    try {
      write_npy(path, a);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string path = dir.file("bad.npy");
  EXPECT_EQ(message(NpyArray{"float32", {3, 4}, std::vector<std::byte>(47)}, path),
            path + ": 47 bytes of data, but shape (3, 4) of float32 needs 48");
  EXPECT_NE(message(NpyArray{"float16", {1}, std::vector<std::byte>(2)}, path)
                .find(path + ": cannot write element type 'float16'"),
            std::string::npos);
  EXPECT_NE(message(NpyArray{"float32", {-1}, {}}, path).find(path + ": cannot write shape (-1,)"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(path));  // nothing is created for an array it refuses

  const std::string nowhere = dir.file("no-such-folder/a.npy");
  const std::string m = message(counting("int32", {2}), nowhere);
  EXPECT_NE(m.find(nowhere + ": cannot open for writing: No such file or directory"), std::string::npos) << m;
}

TEST(NpyRead, VersionsTwoAndThree) {
  const TempFolder dir;
  write_bytes(dir.file("v2.npy"),
              npy_file(2, "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }\n", raw<std::int32_t>({7, -8})));
  const NpyArray v2 = read_npy(dir.file("v2.npy"));
  EXPECT_EQ(v2.element_type, "int32");
  EXPECT_EQ(v2.shape, (std::vector<std::int64_t>{2}));
  EXPECT_EQ(values_of<std::int32_t>(v2), (std::vector<std::int32_t>{7, -8}));

  write_bytes(dir.file("v3.npy"),
              npy_file(3, "{\"descr\": \"<f8\", \"fortran_order\": False, \"shape\": (2, 1)}", raw<double>({0.5, -2})));
  const NpyArray v3 = read_npy(dir.file("v3.npy"));
  EXPECT_EQ(v3.element_type, "float64");
  EXPECT_EQ(v3.shape, (std::vector<std::int64_t>{2, 1}));
  EXPECT_EQ(values_of<double>(v3), (std::vector<double>{0.5, -2}));
}

TEST(NpyRead, HeadersWithOtherSpacingQuotesAndOrder) {
  const TempFolder dir;
  struct Case {
    std::string header, type;
    std::vector<std::int64_t> shape;
  };
  const std::vector<Case> cases{
      {"{ 'shape' : ( 3 , 4 , ) ,\n\t'fortran_order':False,'descr':'<u2' , }   \n", "uint16", {3, 4}},
      {"{\"descr\":\"<f4\",\"fortran_order\":False,\"shape\":(5,)}", "float32", {5}},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (5,),}", "float32", {5}},
      {"{'descr': '=f4', 'fortran_order': False, 'shape': (5,), }", "float32", {5}},  // native order
      {"{'descr': 'f4', 'fortran_order': False, 'shape': (5,), }", "float32", {5}},   // no order: native
      {"{'descr': '>u1', 'fortran_order': False, 'shape': (5,), }", "uint8", {5}},    // one byte has no order
      {"{'descr': '|i1', 'fortran_order': False, 'shape': (5,), }", "int8", {5}},
      {"{'descr': '<i8', 'fortran_order': False, 'shape': (2L, 3L), }", "int64", {2, 3}},  // Python 2 longs
      {"{'descr': '<u8', 'fortran_order': False, 'shape': (), }", "uint64", {}},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': ( ), }", "float64", {}},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (0,), }", "float32", {0}},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 0, 3), }", "float32", {2, 0, 3}},
      {"{'descr': '<u4', 'fortran_order': True, 'shape': (5,), }", "uint32", {5}},  // same bytes as C order
      {"{'descr': '<u4', 'fortran_order': True, 'shape': (1, 5, 1), }", "uint32", {1, 5, 1}},
      {"{'descr': '<u4', 'fortran_order': True, 'shape': (3, 0), }", "uint32", {3, 0}},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    SCOPED_TRACE(c.header);
    const NpyArray expected = counting(c.type, c.shape);
    const std::string path = dir.file("h" + std::to_string(i) + ".npy");
    write_bytes(path, npy_file(1, c.header,
                               std::string(reinterpret_cast<const char*>(expected.data.data()), expected.data.size())));
    const NpyArray read = read_npy(path);
    EXPECT_EQ(read.element_type, c.type);
    EXPECT_EQ(read.shape, c.shape);
    EXPECT_EQ(read.data, expected.data);
  }
}

TEST(NpyRead, IgnoresBytesAfterTheData) {
  // np.save can write several arrays to one open file; numpy.load reads the first.
  const TempFolder dir;
  write_bytes(dir.file("a.npy"), npy_file(1, header("'<i2'", "(2,)"), raw<std::int16_t>({1, 2}) + "more"));
  EXPECT_EQ(values_of<std::int16_t>(read_npy(dir.file("a.npy"))), (std::vector<std::int16_t>{1, 2}));
}

TEST(NpyRead, RefusesMissingAndUnreadableFiles) {
  const TempFolder dir;
  const std::string missing = dir.file("missing.npy");
  const std::string m = usage_error([&] { read_npy(missing); });
  EXPECT_EQ(m, missing + ": cannot open: No such file or directory");
  std::filesystem::create_directory(dir / "folder.npy");
  const std::string folder = dir.file("folder.npy");
  const std::string f = usage_error([&] { read_npy(folder); });
  EXPECT_EQ(f.find('\n'), std::string::npos);
  EXPECT_EQ(f.rfind(folder + ": ", 0), 0u) << f;
}

TEST(NpyRead, RefusesWhatIsNotNpy) {
  const TempFolder dir;
  const std::string ok = header("'<f4'", "(1,)");
  expect_refused(dir, "empty.npy", "", "not a .npy file (it is empty)");
  expect_refused(dir, "text.npy", "hello\nworld, this is text", "not a .npy file (it starts with 'hello\\n', not");
  expect_refused(dir, "archive.npz", std::string("PK\x03\x04\x14\x00", 6), "zip archive");
  expect_refused(dir, "magic-only.npy", "\x93NUMPY", "file ends inside the .npy format version");
  expect_refused(dir, "v1.1.npy", npy_file(1, ok, "abcd", 1), "unsupported .npy format version 1.1");
  expect_refused(dir, "v4.npy", npy_file(4, ok, "abcd"), "unsupported .npy format version 4.0");
  expect_refused(dir, "v0.npy", npy_file(0, ok, "abcd"), "unsupported .npy format version 0.0");
  expect_refused(dir, "short-length.npy", std::string("\x93NUMPY\x02\x00\x10\x00", 10), "header length");
  expect_refused(dir, "short-header.npy", npy_file(1, ok).substr(0, 30), "file ends inside the .npy header (");
  expect_refused(dir, "huge-header.npy", std::string("\x93NUMPY\x02\x00\x00\x00\x00\x40", 12) + ok,
                 "malformed .npy header: 1073741824 bytes long");
}

TEST(NpyRead, RefusesMalformedHeaders) {
  const TempFolder dir;
  const std::string data(64, '\0');
  const std::vector<std::pair<std::string, std::string>> cases{
      {"['descr', 'shape']", "expected '{' at offset 0"},
      {"", "expected '{' at offset 0"},
      {"{'descr': '<f4', 'fortran_order': False}", "no 'shape' key"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}", "unexpected key 'extra'"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", "key 'descr' appears twice"},
      {"{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}", "expected ',' or '}'"},
      {"{'descr': '<f4\n', 'fortran_order': False, 'shape': (1,)}", "unterminated string"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)", "unexpected end"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x", "unexpected text after the dictionary"},
      {"{'descr': '<f4' 'fortran_order': False, 'shape': (1,)}", "expected ',' or '}'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1 2)}", "expected ','"},
      {"{'descr': '<f4', 'fortran_order': false, 'shape': (1,)}", "unknown name 'false'"},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}", "'fortran_order' is '0', not True or False"},
      {"{'descr': 4, 'fortran_order': False, 'shape': (1,)}", "'descr' is '4', not a dtype string"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': [1]}", "'shape' is '[1]', not a tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1)}", "'shape' is '1', not a tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", "'shape' is '(-1,)', not a tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1.5,)}", "expected an integer"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': ('1',)}", "'shape' is '('1',)', not a tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", "integer too large"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::string(1000, '(') + ",)}",
       "literals nested too deeply"},
      {"{1: '<f4'}", "expected a string key"},
  };
  for (std::size_t i = 0; i < cases.size(); ++i)
    expect_refused(dir, "m" + std::to_string(i) + ".npy", npy_file(1, cases[i].first, data),
                   "malformed .npy header: " + cases[i].second);
  // NUL padding is not whitespace to Python either.
  const std::string nul_padded("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}\0", 56);
  expect_refused(dir, "nul.npy", npy_file(1, nul_padded, data), "unexpected text after the dictionary at offset 55");
}

TEST(NpyRead, RefusesDtypesItDoesNotRead) {
  const TempFolder dir;
  const std::string data(64, '\0');
  const std::vector<std::pair<std::string, std::string>> cases{
      {"'|O'", "dtype '|O' (Python objects) is not supported; cutune reads int8, int16, int32, int64, uint8"},
      {"'<c8'", "dtype '<c8' (complex) is not supported"},
      {"'<U5'", "dtype '<U5' (Unicode strings)"},
      {"'|S3'", "dtype '|S3' (byte strings)"},
      {"'|b1'", "dtype '|b1' (bool)"},
      {"'<f2'", "dtype '<f2' (2-byte floats)"},
      {"'<f16'", "dtype '<f16' (16-byte floats)"},
      {"'<i16'", "dtype '<i16' (16-byte signed integers)"},
      {"'<M8[ns]'", "dtype '<M8[ns]' (datetimes)"},
      {"'<m8[s]'", "dtype '<m8[s]' (timedeltas)"},
      {"'|V8'", "dtype '|V8' (raw bytes or records)"},
      {"'float32'", "dtype 'float32' (an unknown type code)"},
      {"''", "dtype '' (an unknown type code)"},
      {"'>f4'", "dtype '>f4' is big-endian, which cutune does not read (save a.astype('<f4') instead)"},
      {"'>i8'", "dtype '>i8' is big-endian"},
      {"[('x', '<f4'), ('y', '<f4')]", "structured dtype '[('x', '<f4'), ('y', '<f4')]' is not supported"},
      {"{'names': ['x'], 'formats': ['<f4']}", "structured dtype"},
  };
  for (std::size_t i = 0; i < cases.size(); ++i)
    expect_refused(dir, "d" + std::to_string(i) + ".npy", npy_file(1, header(cases[i].first, "(1,)"), data),
                   cases[i].second);
}

TEST(NpyRead, RefusesFortranOrderTruncatedDataAndHugeShapes) {
  const TempFolder dir;
  expect_refused(dir, "fortran.npy", npy_file(1, header("'<f4'", "(3, 4)", "True"), std::string(48, '\0')),
                 "fortran_order is True for shape (3, 4), and cutune reads C order only");
  expect_refused(dir, "short.npy", npy_file(1, header("'<f4'", "(3, 4)"), std::string(40, '\0')),
                 "the data is 40 bytes, but shape (3, 4) of float32 needs 48");
  expect_refused(dir, "no-data.npy", npy_file(1, header("'<f8'", "()")),
                 "the data is 0 bytes, but shape () of float64 needs 8");
  expect_refused(dir, "huge.npy", npy_file(1, header("'<f8'", "(4611686018427387904, 4)")),
                 "shape (4611686018427387904, 4) of float64 is too large");
  // Claims 2^40 elements in a small file: refused before anything that size is allocated.
  expect_refused(dir, "big.npy", npy_file(1, header("'<u1'", "(1099511627776,)"), "x"),
                 "the data is 1 bytes, but shape (1099511627776,) of uint8 needs 1099511627776");
}

TEST(NpyRead, MessagesStayOnOneLine) {
  const TempFolder dir;
  // The header's newlines and odd bytes are escaped in the quoted header.
  const std::string path = dir.file("lines.npy");
  write_bytes(path, npy_file(1, "{'descr':\n'<f4',\n'fortran_order': False,\n'shape': (1,),\n'x\x01': 1}\n"));
  const std::string m = usage_error([&] { read_npy(path); });
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  EXPECT_NE(m.find("unexpected key 'x\\x01'"), std::string::npos) << m;
  // Long headers are cut short.
  write_bytes(path, npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'bad': (" +
                                    std::string(2000, '1') + ")}"));
  const std::string l = usage_error([&] { read_npy(path); });
  EXPECT_LT(l.size(), 400u) << l;
  EXPECT_NE(l.find("...'"), std::string::npos) << l;
}

TEST(NpyFits, ChecksTypeAndElementCount) {
  const NpyArray doubles{"float64", {10, 100}, {}};
  EXPECT_EQ(usage_error([&] { check_npy_fits(doubles, "x.npy", "x", "float32", 1000); }),
            "x.npy: dtype float64 (<f8), but buffer 'x' holds float32");
  const NpyArray floats{"float32", {10, 100}, {}};
  EXPECT_EQ(usage_error([&] { check_npy_fits(floats, "x.npy", "x", "float32", 1024); }),
            "x.npy: 1000 elements (shape (10, 100)), but buffer 'x' holds 1024");
  EXPECT_EQ(usage_error([&] {
              check_npy_fits(NpyArray{"int32", {5}, {}}, "in/a.npy", "a", "int32", 4);
            }),
            "in/a.npy: 5 elements (shape (5,)), but buffer 'a' holds 4");
  EXPECT_EQ(usage_error([&] {
              check_npy_fits(NpyArray{"uint8", {}, {}}, "s.npy", "s", "int32", 1);
            }),
            "s.npy: dtype uint8 (|u1), but buffer 's' holds int32");
  EXPECT_NO_THROW(check_npy_fits(floats, "x.npy", "x", "float32", 1000));
  EXPECT_NO_THROW(check_npy_fits(NpyArray{"float32", {1000}, {}}, "x.npy", "x", "float32", 1000));
  EXPECT_NO_THROW(check_npy_fits(NpyArray{"int64", {}, {}}, "s.npy", "s", "int64", 1));
  EXPECT_NO_THROW(check_npy_fits(NpyArray{"int64", {4, 0}, {}}, "e.npy", "e", "int64", 0));
}

// Files numpy wrote, read here, and files written here, loaded by numpy. Skipped where Debian's
// python3-numpy is not installed.
TEST(NpyNumpy, InteroperatesBothWays) {
  if (std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "numpy is not installed for /usr/bin/python3";
  const TempFolder dir;
  const std::string script = dir.file("npy_check.py");
  write_bytes(script, R"(import math
import sys
import numpy as np
mode, folder = sys.argv[1], sys.argv[2]
types = {'int8': '|i1', 'int16': '<i2', 'int32': '<i4', 'int64': '<i8', 'uint8': '|u1', 'uint16': '<u2',
         'uint32': '<u4', 'uint64': '<u8', 'float32': '<f4', 'float64': '<f8'}
for name, descr in types.items():
    expected = np.arange(12, dtype=descr).reshape(3, 4)
    if mode == 'write':
        np.save(f'{folder}/np-{name}.npy', expected)
    else:
        got = np.load(f'{folder}/ours-{name}.npy')
        assert got.dtype == np.dtype(descr) and got.shape == (3, 4) and (got == expected).all(), name
        scalar = np.load(f'{folder}/ours-scalar-{name}.npy')
        assert scalar.dtype == np.dtype(descr) and scalar.shape == () and scalar == 0, name
if mode == 'write':
    with open(f'{folder}/shapes.txt') as f:
        for i, line in enumerate(f):
            shape = tuple(int(d) for d in line.split())
            np.save(f'{folder}/np-shape-{i}.npy', np.arange(math.prod(shape), dtype='<f4').reshape(shape))
    np.save(f'{folder}/np-scalar.npy', np.float64(2.5))
    np.save(f'{folder}/np-fortran-2d.npy', np.asfortranarray(np.arange(12, dtype='<f4').reshape(3, 4)))
    np.save(f'{folder}/np-big-endian.npy', np.arange(3, dtype='>f4'))
    np.save(f'{folder}/np-complex.npy', np.zeros(3, dtype=np.complex64))
    np.save(f'{folder}/np-object.npy', np.array([None, 1], dtype=object), allow_pickle=True)
    np.save(f'{folder}/np-structured.npy', np.zeros(2, dtype=[('x', '<f4'), ('y', '<i4')]))
    with open(f'{folder}/np-v2.npy', 'wb') as f:
        np.lib.format.write_array(f, np.arange(4, dtype='<i4'), version=(2, 0))
    with open(f'{folder}/np-v3.npy', 'wb') as f:
        np.lib.format.write_array(f, np.arange(4, dtype='<i4'), version=(3, 0))
)");
  // Empty arrays of many shapes give headers of many lengths (numpy pads them 1 to 64 bytes). numpy
  // refuses shapes whose bytes, zero dimensions left out, would overflow int64.
  std::vector<std::vector<std::int64_t>> shapes{{}, {0}, {5}, {3, 4}};
  for (std::int64_t a = 1; a <= 100'000'000'000'000'000; a *= 10) {
    shapes.push_back({0, a});
    shapes.push_back({a, 0});
    if (a <= 1'000'000'000)
      for (std::int64_t b = 1; b <= 1'000'000; b *= 100) shapes.push_back({0, a, b, 7});
  }
  std::string shape_lines;
  for (const auto& shape : shapes) {
    for (const auto d : shape) shape_lines += std::to_string(d) + " ";
    shape_lines += "\n";
  }
  write_bytes(dir.file("shapes.txt"), shape_lines);

  const auto python = [&](const std::string& mode) {
    return std::system(("/usr/bin/python3 '" + script + "' " + mode + " '" + dir.string() + "'").c_str());
  };
  ASSERT_EQ(python("write"), 0);
  for (const auto& type : kTypes) {
    SCOPED_TRACE(type);
    const NpyArray read = read_npy(dir.file("np-" + type + ".npy"));
    const NpyArray expected = counting(type, {3, 4});
    EXPECT_EQ(read.element_type, type);
    EXPECT_EQ(read.shape, expected.shape);
    EXPECT_EQ(read.data, expected.data);
    write_npy(dir.file("ours-" + type + ".npy"), expected);
    write_npy(dir.file("ours-scalar-" + type + ".npy"), counting(type, {}));
    EXPECT_EQ(file_bytes(dir.file("ours-" + type + ".npy")), file_bytes(dir.file("np-" + type + ".npy")));
  }
  EXPECT_EQ(python("check"), 0);
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const std::string theirs = dir.file("np-shape-" + std::to_string(i) + ".npy");
    EXPECT_EQ(read_npy(theirs).shape, shapes[i]);
    write_npy(dir.file("ours.npy"), counting("float32", shapes[i]));
    EXPECT_EQ(file_bytes(dir.file("ours.npy")), file_bytes(theirs)) << "the same bytes as numpy for shape " << i;
  }

  EXPECT_EQ(values_of<double>(read_npy(dir.file("np-scalar.npy"))), std::vector<double>{2.5});
  EXPECT_EQ(values_of<std::int32_t>(read_npy(dir.file("np-v2.npy"))), (std::vector<std::int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(values_of<std::int32_t>(read_npy(dir.file("np-v3.npy"))), (std::vector<std::int32_t>{0, 1, 2, 3}));
  EXPECT_NE(usage_error([&] { read_npy(dir.file("np-fortran-2d.npy")); }).find("fortran_order is True"),
            std::string::npos);
  EXPECT_NE(usage_error([&] { read_npy(dir.file("np-big-endian.npy")); }).find("big-endian"), std::string::npos);
  EXPECT_NE(usage_error([&] { read_npy(dir.file("np-complex.npy")); }).find("(complex)"), std::string::npos);
  EXPECT_NE(usage_error([&] { read_npy(dir.file("np-object.npy")); }).find("(Python objects)"), std::string::npos);
  EXPECT_NE(usage_error([&] { read_npy(dir.file("np-structured.npy")); }).find("structured dtype"), std::string::npos);
}
