// CPU emulation of the CUDA C++ that render_cuda emits, for the tests: compiled by g++
// before each kernel. A block runs as one OS thread per CUDA thread; __syncthreads is a
// barrier across them; __shared__ arrays are function statics, shared by the threads of
// the block, and blocks run one after another with a barrier between them.
#ifndef SYMSHAPE_CUDA_EMU_H
#define SYMSHAPE_CUDA_EMU_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <thread>
#include <vector>

struct dim3 {
    unsigned int x, y, z;
};

// One definition each across the translation units of a test program.
inline thread_local dim3 threadIdx;
inline thread_local dim3 blockIdx;
inline dim3 blockDim;
inline dim3 gridDim;
inline pthread_barrier_t emu_barrier;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __restrict__ __restrict
#define __shared__ static
#define __align__(n) alignas(n)
#define __launch_bounds__(...)

static inline void __syncthreads(void) { pthread_barrier_wait(&emu_barrier); }

template <typename T> static inline T __ldg(const T *p) { return *p; }

#define EMU_VEC2(name, t)        \
    struct alignas(2 * sizeof(t)) name { \
        t x, y;                  \
    };
#define EMU_VEC4(name, t)        \
    struct alignas(4 * sizeof(t)) name { \
        t x, y, z, w;            \
    };
EMU_VEC2(char2, signed char)
EMU_VEC4(char4, signed char)
EMU_VEC2(uchar2, unsigned char)
EMU_VEC4(uchar4, unsigned char)
EMU_VEC2(short2, short)
EMU_VEC4(short4, short)
EMU_VEC2(ushort2, unsigned short)
EMU_VEC4(ushort4, unsigned short)
EMU_VEC2(int2, int)
EMU_VEC4(int4, int)
EMU_VEC2(uint2, unsigned int)
EMU_VEC4(uint4, unsigned int)
EMU_VEC2(longlong2, long long)
EMU_VEC4(longlong4, long long)
EMU_VEC2(ulonglong2, unsigned long long)
EMU_VEC2(float2, float)
EMU_VEC4(float4, float)
EMU_VEC2(double2, double)
EMU_VEC4(double4, double)

// cuda_fp16.h and cuda_bf16.h: the kernels only move these values, never compute on them.
struct __half {
    unsigned short bits;
};
struct __nv_bfloat16 {
    unsigned short bits;
};

template <typename T> static inline T min(T a, T b) { return b < a ? b : a; }
template <typename T> static inline T max(T a, T b) { return a < b ? b : a; }

// Runs `kernel()` over `grid` blocks of `block` threads: one thread per CUDA thread of a
// block, the blocks in order, a barrier after each.
template <typename F> void emu_launch(dim3 grid, dim3 block, F kernel) {
    unsigned int n = block.x * block.y * block.z;
    if (n == 0 || grid.x == 0 || grid.y == 0 || grid.z == 0) return;
    gridDim = grid;
    blockDim = block;
    pthread_barrier_init(&emu_barrier, NULL, n);
    std::vector<std::thread> threads;
    threads.reserve(n);
    for (unsigned int t = 0; t < n; ++t) {
        threads.emplace_back([=] {
            threadIdx = dim3{t % block.x, t / block.x % block.y, t / (block.x * block.y)};
            for (unsigned int z = 0; z < grid.z; ++z)
                for (unsigned int y = 0; y < grid.y; ++y)
                    for (unsigned int x = 0; x < grid.x; ++x) {
                        blockIdx = dim3{x, y, z};
                        kernel();
                        pthread_barrier_wait(&emu_barrier);
                    }
        });
    }
    for (auto &th : threads) th.join();
    pthread_barrier_destroy(&emu_barrier);
}

#endif
