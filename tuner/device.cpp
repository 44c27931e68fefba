#include "device.hpp"

#include <nvrtc.h>

#include <cstdio>

namespace cutune {

int device_count() {
  int count = 0;
  CUTUNE_CU(cuDeviceGetCount, &count);
  return count;
}

static int attribute(CUdevice device, CUdevice_attribute which) {
  int value = 0;
  CUTUNE_CU(cuDeviceGetAttribute, &value, which, device);
  return value;
}

static std::string format_uuid(const CUuuid& uuid) {
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  char text[64];
  std::snprintf(text, sizeof text, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return text;
}

Device::Device(int ordinal, Context context) : ordinal_(ordinal) {
  const int count = device_count();
  if (ordinal < 0 || ordinal >= count)
    throw UsageError("no CUDA device " + std::to_string(ordinal) + " (this machine has " + std::to_string(count) +
                     (count == 1 ? " device)" : " devices)"));
  CUTUNE_CU(cuDeviceGet, &handle_, ordinal);
  if (context == Context::now) make_current();

  char name[256] = {};
  CUTUNE_CU(cuDeviceGetName, name, sizeof name, handle_);
  CUuuid uuid{};
  CUTUNE_CU(cuDeviceGetUuid, &uuid, handle_);
  std::size_t memory = 0;
  CUTUNE_CU(cuDeviceTotalMem, &memory, handle_);
  int driver_version = 0;
  CUTUNE_CU(cuDriverGetVersion, &driver_version);
  int nvrtc_major = 0, nvrtc_minor = 0;
  nvrtcVersion(&nvrtc_major, &nvrtc_minor);

  auto& f = fingerprint_;
  f.uuid = format_uuid(uuid);
  f.name = name;
  f.cc_major = attribute(handle_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  f.cc_minor = attribute(handle_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  f.sm_count = attribute(handle_, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  f.memory_bytes = static_cast<std::int64_t>(memory);
  f.l2_bytes = attribute(handle_, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  f.memory_clock_khz = attribute(handle_, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  f.bus_width_bits = attribute(handle_, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  // Double data rate: two transfers per clock over the whole bus.
  f.theoretical_bandwidth_gbs = 2.0 * f.memory_clock_khz * 1e3 * (f.bus_width_bits / 8.0) / 1e9;
  f.driver_version = driver_version;
  f.nvrtc_version = std::to_string(nvrtc_major) + "." + std::to_string(nvrtc_minor);

  limits_.cc_major = f.cc_major;
  limits_.cc_minor = f.cc_minor;
  limits_.sm_count = f.sm_count;
  limits_.l2_bytes = f.l2_bytes;
  limits_.max_threads_per_block = attribute(handle_, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  limits_.max_threads_per_sm = attribute(handle_, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  limits_.max_shared_per_block = attribute(handle_, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  limits_.max_shared_per_block_optin = attribute(handle_, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
}

Device::~Device() {
  if (context_) cuda::driver().cuDevicePrimaryCtxRelease(handle_);
}

void Device::make_current() const {
  if (!context_) CUTUNE_CU(cuDevicePrimaryCtxRetain, &context_, handle_);
  CUTUNE_CU(cuCtxSetCurrent, context_);
}

PinnedRegion::PinnedRegion(void* host, std::size_t bytes) {
  if (bytes && cuda::driver().cuMemHostRegister(host, bytes, 0) == CUDA_SUCCESS) host_ = host;
}

PinnedRegion::~PinnedRegion() {
  if (host_) cuda::driver().cuMemHostUnregister(host_);
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes > 0) CUTUNE_CU(cuMemAlloc, &pointer_, bytes);
}

DeviceBuffer::~DeviceBuffer() {
  if (pointer_) cuda::driver().cuMemFree(pointer_);
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (pointer_) cuda::driver().cuMemFree(pointer_);
    pointer_ = std::exchange(other.pointer_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::upload(const void* host, std::size_t bytes, std::size_t offset) {
  if (offset + bytes > bytes_)
    throw Error("upload of " + std::to_string(bytes) + " bytes overruns a buffer of " + std::to_string(bytes_));
  if (!bytes) return;
  CUTUNE_CU(cuMemcpyHtoD, pointer_ + offset, host, bytes);
  // From pageable memory the copy returns once the bytes are staged, with the DMA still pending
  // on the legacy stream, which the engine's non-blocking streams do not wait for: a kernel
  // launched next could read the buffer before they land (test_gpu_output_check saw its fresh
  // buffers still zero on an H200). An upload is done when it returns.
  CUTUNE_CU(cuStreamSynchronize, CU_STREAM_LEGACY);
}

void DeviceBuffer::download(void* host, std::size_t bytes, std::size_t offset) const {
  if (offset + bytes > bytes_)
    throw Error("download of " + std::to_string(bytes) + " bytes overruns a buffer of " + std::to_string(bytes_));
  if (bytes) CUTUNE_CU(cuMemcpyDtoH, host, pointer_ + offset, bytes);
}

Stream::Stream() { CUTUNE_CU(cuStreamCreate, &stream_, CU_STREAM_NON_BLOCKING); }
Stream::~Stream() {
  if (stream_) cuda::driver().cuStreamDestroy(stream_);
}
void Stream::synchronize() const { CUTUNE_CU(cuStreamSynchronize, stream_); }

Event::Event() { CUTUNE_CU(cuEventCreate, &event_, CU_EVENT_DEFAULT); }
Event::~Event() {
  if (event_) cuda::driver().cuEventDestroy(event_);
}
void Event::record(CUstream stream) const { CUTUNE_CU(cuEventRecord, event_, stream); }
float Event::elapsed_ms_since(const Event& start) const {
  float ms = 0;
  CUTUNE_CU(cuEventElapsedTime, &ms, start.event_, event_);
  return ms;
}

Module::Module(const std::vector<char>& cubin) { CUTUNE_CU(cuModuleLoadData, &module_, cubin.data()); }
Module::~Module() {
  if (module_) cuda::driver().cuModuleUnload(module_);
}
CUfunction Module::function(const std::string& name) const {
  CUfunction f{};
  const CUresult result = cuda::driver().cuModuleGetFunction(&f, module_, name.c_str());
  if (result != CUDA_SUCCESS)
    cuda::throw_cuda_error(result, ("cuModuleGetFunction(" + name + ")").c_str(), __FILE__, __LINE__);
  return f;
}

}  // namespace cutune
