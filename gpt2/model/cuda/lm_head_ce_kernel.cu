// lm_head_ce_kernel.hpp's kernel: one block per row; 16-byte loads when the rows allow them.
#include "gpt2/model/cuda/lm_head_ce_kernel.hpp"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cfloat>

namespace gaugelab::gpt2::cuda {

namespace {

constexpr int kThreads = 1024;

// (max, Σexp(x − max)) pairs merged: the online softmax's reduction.
__device__ __forceinline__ void merge(float& m, float& s, float m2, float s2) {
  const float mn = fmaxf(m, m2);
  s = (m == -FLT_MAX ? 0.f : s * __expf(m - mn)) + (m2 == -FLT_MAX ? 0.f : s2 * __expf(m2 - mn));
  m = mn;
}

__device__ __forceinline__ void block_merge(float& m, float& s) {
  __shared__ float sm[32], ss[32];
  for (int o = 16; o > 0; o >>= 1) merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) sm[warp] = m, ss[warp] = s;
  __syncthreads();
  const int warps = blockDim.x / 32;
  m = lane < warps ? sm[lane] : -FLT_MAX;
  s = lane < warps ? ss[lane] : 0.f;
  for (int o = 16; o > 0; o >>= 1) merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
  // every lane of every warp now holds the row's (max, sum)
}

template <bool kVec>
__global__ void __launch_bounds__(kThreads) ce_rows(__nv_bfloat16* __restrict__ logits, std::int64_t vocab,
                                                    std::int64_t ld, const std::int64_t* __restrict__ targets,
                                                    const float* __restrict__ scale, float* __restrict__ row_loss,
                                                    bool write_grad) {
  const std::int64_t row = blockIdx.x;
  __nv_bfloat16* x = logits + row * ld;
  float m = -FLT_MAX, s = 0.f;
  if constexpr (kVec) {  // ld % 8 == 0 and 16-byte aligned rows: 8 bf16 per load
    const std::int64_t nv = vocab / 8;
    const uint4* xv = reinterpret_cast<const uint4*>(x);
    for (std::int64_t v = threadIdx.x; v < nv; v += blockDim.x) {
      const uint4 raw = xv[v];
      const __nv_bfloat16* e = reinterpret_cast<const __nv_bfloat16*>(&raw);
      float lm = -FLT_MAX;
#pragma unroll
      for (int k = 0; k < 8; ++k) lm = fmaxf(lm, __bfloat162float(e[k]));
      float ls = 0.f;
#pragma unroll
      for (int k = 0; k < 8; ++k) ls += __expf(__bfloat162float(e[k]) - lm);
      merge(m, s, lm, ls);
    }
    for (std::int64_t j = nv * 8 + threadIdx.x; j < vocab; j += blockDim.x) merge(m, s, __bfloat162float(x[j]), 1.f);
  } else {
    for (std::int64_t j = threadIdx.x; j < vocab; j += blockDim.x) merge(m, s, __bfloat162float(x[j]), 1.f);
  }
  block_merge(m, s);
  const float lse = m + __logf(s);
  const std::int64_t t = targets[row] < 0 ? 0 : targets[row];
  const float picked = __bfloat162float(x[t]);
  __syncthreads();  // every thread has read x[t] before any thread overwrites it
  if (threadIdx.x == 0) row_loss[row] = lse - picked;
  if (!write_grad) return;
  const float sc = scale[row];
  if constexpr (kVec) {
    const std::int64_t nv = ld / 8;  // padding columns too (gradient 0)
    uint4* xv = reinterpret_cast<uint4*>(x);
    for (std::int64_t v = threadIdx.x; v < nv; v += blockDim.x) {
      uint4 raw = xv[v];
      __nv_bfloat16* e = reinterpret_cast<__nv_bfloat16*>(&raw);
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        const std::int64_t j = v * 8 + k;
        const float p = j < vocab ? __expf(__bfloat162float(e[k]) - lse) : 0.f;
        e[k] = __float2bfloat16((p - (j == t ? 1.f : 0.f)) * sc);
      }
      xv[v] = raw;
    }
  } else {
    for (std::int64_t j = threadIdx.x; j < ld; j += blockDim.x) {
      const float p = j < vocab ? __expf(__bfloat162float(x[j]) - lse) : 0.f;
      x[j] = __float2bfloat16((p - (j == t ? 1.f : 0.f)) * sc);
    }
  }
}

}  // namespace

int lm_head_ce_rows_bf16(void* logits, std::int64_t rows, std::int64_t vocab, std::int64_t ld,
                         const std::int64_t* targets, const float* scale, float* row_loss, bool write_grad,
                         void* stream) {
  if (rows <= 0) return 0;
  auto* x = static_cast<__nv_bfloat16*>(logits);
  const auto st = static_cast<cudaStream_t>(stream);
  const bool vec = ld % 8 == 0 && reinterpret_cast<std::uintptr_t>(logits) % 16 == 0;
  if (vec) ce_rows<true><<<static_cast<unsigned>(rows), kThreads, 0, st>>>(x, vocab, ld, targets, scale, row_loss, write_grad);
  else ce_rows<false><<<static_cast<unsigned>(rows), kThreads, 0, st>>>(x, vocab, ld, targets, scale, row_loss, write_grad);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace gaugelab::gpt2::cuda
