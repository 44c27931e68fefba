// A 2-D convolution in the style of Kernel Tuner's convolution example: each block computes a
// tile of (block_size_x * tile_size_x) x (block_size_y * tile_size_y) outputs from the input
// tile plus its border, staged in shared memory; the filter lives in constant memory (filled
// from cmem_args). The tune parameters arrive as definitions; the sizes may be given with -D
// (compiler_options) and default to a 4096 x 4096 image and a 17 x 17 filter.
#ifndef image_width
#define image_width 4096
#endif
#ifndef image_height
#define image_height 4096
#endif
#ifndef filter_width
#define filter_width 17
#endif
#ifndef filter_height
#define filter_height 17
#endif
#define input_width (image_width + filter_width - 1)
#define input_height (image_height + filter_height - 1)
#define tile_width (block_size_x * tile_size_x)
#define tile_height (block_size_y * tile_size_y)

__constant__ float d_filter[filter_height * filter_width];

// `filter` holds the same values as d_filter; it is passed as Kernel Tuner's example passes it.
__global__ void convolution_kernel(float *output, const float *input, const float *filter) {
    __shared__ float staged[tile_height + filter_height - 1][tile_width + filter_width - 1];
    const int x0 = blockIdx.x * tile_width;
    const int y0 = blockIdx.y * tile_height;

    for (int i = threadIdx.y; i < tile_height + filter_height - 1; i += block_size_y) {
        for (int j = threadIdx.x; j < tile_width + filter_width - 1; j += block_size_x) {
            const int y = y0 + i, x = x0 + j;
            staged[i][j] = (y < input_height && x < input_width) ? input[y * input_width + x] : 0.0f;
        }
    }
    __syncthreads();

    #pragma unroll
    for (int ty = 0; ty < tile_size_y; ty++) {
        #pragma unroll
        for (int tx = 0; tx < tile_size_x; tx++) {
            const int i0 = threadIdx.y + ty * block_size_y;
            const int j0 = threadIdx.x + tx * block_size_x;
            float sum = 0.0f;
            #pragma unroll
            for (int i = 0; i < filter_height; i++) {
                #pragma unroll
                for (int j = 0; j < filter_width; j++) {
                    sum += staged[i0 + i][j0 + j] * d_filter[i * filter_width + j];
                }
            }
            const int y = y0 + i0, x = x0 + j0;
            if (y < image_height && x < image_width) {
                output[y * image_width + x] = sum;
            }
        }
    }
}
