// host_device.h: OPSPEC_HOST_DEVICE, which marks functions that CUDA device
// code calls too (the shared elementwise functors, 16-bit float conversions,
// the Philox generator). It expands to nothing outside nvcc.
#pragma once

// OPSPEC_HOST_DEVICE: __host__ __device__ under nvcc, nothing otherwise.
#ifdef __CUDACC__
#define OPSPEC_HOST_DEVICE __host__ __device__
#else
#define OPSPEC_HOST_DEVICE
#endif
