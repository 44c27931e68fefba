#pragma once
// A CUDA device: its fingerprint and limits, its primary context, and RAII owners for the
// driver objects the engine creates (buffers, streams, events, modules).
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/limits.hpp"
#include "cuda_driver.hpp"
#include "device_fingerprint.hpp"

namespace cutune {

// Number of CUDA devices; throws EnvironmentError when there is no driver.
int device_count();

class Device {
 public:
  // When the primary context is retained: at once (made current), or at the first make_current().
  // The tuner's parent process needs a device's fingerprint and limits, and a context only to
  // measure copy bandwidth once per device; creating one costs tenths of a second per GPU and
  // memory on it, while its workers create their own.
  enum class Context { now, when_needed };
  // Reads the fingerprint and limits of device `ordinal`, retaining its primary context as told.
  // Throws EnvironmentError naming the ordinal when it does not exist.
  explicit Device(int ordinal, Context context = Context::now);
  ~Device();
  Device(const Device&) = delete;  // owns a primary-context reference
  Device& operator=(const Device&) = delete;

  int ordinal() const { return ordinal_; }
  const DeviceFingerprint& fingerprint() const { return fingerprint_; }
  const DeviceLimits& limits() const { return limits_; }

  // Retains the primary context first if that was left until needed.
  void make_current() const;

 private:
  int ordinal_;
  CUdevice handle_{};
  mutable CUcontext context_{};  // retained at construction or by the first make_current()
  DeviceFingerprint fingerprint_;
  DeviceLimits limits_;
};

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;  // owns device memory
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : pointer_(std::exchange(other.pointer_, 0)), bytes_(std::exchange(other.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;

  CUdeviceptr get() const { return pointer_; }
  std::size_t bytes() const { return bytes_; }
  void upload(const void* host, std::size_t bytes, std::size_t offset = 0);
  void download(void* host, std::size_t bytes, std::size_t offset = 0) const;
  // Forget the allocation without freeing it: after a context reset the memory is already gone.
  void abandon() {
    pointer_ = 0;
    bytes_ = 0;
  }

 private:
  CUdeviceptr pointer_ = 0;
  std::size_t bytes_ = 0;
};

// Page-locks an existing host allocation so downloads into it run at full DMA speed.
class PinnedRegion {
 public:
  PinnedRegion() = default;
  PinnedRegion(void* host, std::size_t bytes);  // on failure stays unpinned: slower, still correct
  ~PinnedRegion();
  PinnedRegion(const PinnedRegion&) = delete;  // owns one registration
  PinnedRegion& operator=(const PinnedRegion&) = delete;

 private:
  void* host_ = nullptr;
};

class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;  // owns the CUstream
  Stream& operator=(const Stream&) = delete;
  CUstream get() const { return stream_; }
  void synchronize() const;

 private:
  CUstream stream_{};
};

class Event {
 public:
  Event();
  ~Event();
  Event(const Event&) = delete;  // owns the CUevent
  Event& operator=(const Event&) = delete;
  CUevent get() const { return event_; }
  void record(CUstream stream) const;
  float elapsed_ms_since(const Event& start) const;

 private:
  CUevent event_{};
};

class Module {
 public:
  explicit Module(const std::vector<char>& cubin);
  ~Module();
  Module(const Module&) = delete;  // owns the CUmodule
  Module& operator=(const Module&) = delete;
  CUfunction function(const std::string& name) const;

 private:
  CUmodule module_{};
};

}  // namespace cutune
