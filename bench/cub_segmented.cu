#include <cub/device/device_segmented_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "cub_segmented.hpp"

namespace cutune::bench {
namespace {

// Window g = s*W + w covers [s*P + w*k, min(s*P + (w+1)*k, (s+1)*P)).
struct WindowEdge {
  long long points, window, per_series;
  bool end;
  __host__ __device__ long long operator()(long long g) const {
    const long long s = g / per_series, w = g % per_series;
    const long long start = s * points + w * window;
    if (!end) return start;
    const long long stop = start + window, series_end = (s + 1) * points;
    return stop < series_end ? stop : series_end;
  }
};

auto edges(long long points, long long window, bool end) {
  return thrust::make_transform_iterator(thrust::make_counting_iterator<long long>(0),
                                         WindowEdge{points, window, (points + window - 1) / window, end});
}

}  // namespace

CubSegmentedReduce::CubSegmentedReduce(const float* in, float* out, long long series, long long points, long long window,
                                       CubOp op)
    : in_(in), out_(out), series_(series), points_(points), window_(window), op_(op) {
  dispatch(nullptr, temp_bytes_, nullptr);
  cudaMalloc(&temp_, temp_bytes_ ? temp_bytes_ : 1);  // a null pointer would ask CUB for the size again
}

CubSegmentedReduce::~CubSegmentedReduce() { cudaFree(temp_); }

cudaError_t CubSegmentedReduce::dispatch(void* temp, size_t& temp_bytes, cudaStream_t stream) const {
  const long long segments = series_ * ((points_ + window_ - 1) / window_);
  const auto begin = edges(points_, window_, false), end = edges(points_, window_, true);
  switch (op_) {
    case CubOp::min: return cub::DeviceSegmentedReduce::Min(temp, temp_bytes, in_, out_, segments, begin, end, stream);
    case CubOp::max: return cub::DeviceSegmentedReduce::Max(temp, temp_bytes, in_, out_, segments, begin, end, stream);
    default: return cub::DeviceSegmentedReduce::Sum(temp, temp_bytes, in_, out_, segments, begin, end, stream);
  }
}

cudaError_t CubSegmentedReduce::run(cudaStream_t stream) { return dispatch(temp_, temp_bytes_, stream); }

}  // namespace cutune::bench
