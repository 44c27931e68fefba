#pragma once
// NumPy .npy files, for kernel specs whose inputs come from files and whose expected outputs are
// files: read versions 1.0, 2.0 and 3.0 of the format, write version 1.0 (what numpy.save writes for
// any array cutune handles). Only plain little-endian numbers in C order: cutune copies the bytes
// into device buffers as they are, so anything that would need converting (big-endian, Fortran
// order) is refused with a message that says how to convert it in numpy, never converted silently.
// Format: https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cutune {

// A .npy array: its element type by cutune's name (int32, uint32, int64, float32, float64, and also
// int8, uint8, int16, uint16, uint64), its shape, and its bytes in C order, little-endian.
struct NpyArray {
  std::string element_type;         // cutune name, e.g. "float32"
  std::vector<std::int64_t> shape;  // () for a scalar: one element
  std::vector<std::byte> data;      // element_count() * element_bytes() bytes, C order

  // The product of the shape (1 for a scalar). Throws Error for a negative dimension or a product
  // beyond int64.
  std::int64_t element_count() const;
  // Bytes per element of element_type; throws UsageError for an unknown type.
  std::size_t element_bytes() const;
};

// Reads a .npy file. Throws UsageError with one line that names the file and what is wrong: missing
// or unreadable file, not a .npy file, unsupported version, malformed header, a dtype cutune does not
// read (objects, structured, big-endian, complex, strings, bool, float16...), Fortran order where it
// differs from C order, data shorter than the header says. Bytes after the data are ignored, as
// numpy.load ignores them (np.save can append several arrays to one open file).
NpyArray read_npy(const std::string& path);

// Writes a C-order little-endian .npy, version 1.0, its header padded so that the data starts at a
// multiple of 64 bytes (as numpy does). Throws Error naming the file when it cannot be written (and
// leaves no partial file behind), or when data.size() does not match shape and element type.
void write_npy(const std::string& path, const NpyArray& array);

// The numpy dtype string of a cutune element type: "<f4" for float32, "<i4" int32, "<u4" uint32,
// "<i8" int64, "<u8" uint64, "<f8" float64, "|i1" int8, "|u1" uint8, "<i2" int16, "<u2" uint16.
// Throws UsageError for an unknown name.
std::string npy_descr(const std::string& element_type);

// Checks that `array`, read from `path`, fits buffer `buffer` of `elements` elements of
// `element_type` (any shape with that element count), else throws UsageError, e.g.
// "x.npy: dtype float64 (<f8), but buffer 'x' holds float32" or
// "x.npy: 1000 elements (shape (10, 100)), but buffer 'x' holds 1024".
void check_npy_fits(const NpyArray& array, const std::string& path, const std::string& buffer,
                    const std::string& element_type, std::int64_t elements);

}  // namespace cutune
