// lrm_weight_kernel.hpp's kernels. Forward: one block per row, threads across its columns. Backward:
// one block per chunk of K rows (K divides a group's rows, so a chunk lies in one group), threads across the
// columns; dr by a block reduction per row, dc's per-chunk partials in shared memory, then summed over each
// group's chunks by a second kernel, every sum in a fixed order.
#include "gpt2/model/cuda/lrm_weight_kernel.hpp"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace gaugelab::gpt2::cuda {

namespace {

constexpr int kThreads = 256;

// One block per row (grid-stride over rows), threads across its columns.
__global__ void __launch_bounds__(kThreads)
    fwd(const float* __restrict__ w, const float* __restrict__ r, const float* __restrict__ c,
        __nv_bfloat16* __restrict__ e, std::int64_t out, std::int64_t in, std::int64_t rows_per_group) {
  for (std::int64_t i = blockIdx.x; i < out; i += gridDim.x) {
    const float ri = r != nullptr ? r[i] : 1.f;
    const float* cg = c != nullptr ? c + (i / rows_per_group) * in : nullptr;
    const std::int64_t off = i * in;
    for (std::int64_t j = threadIdx.x; j < in; j += blockDim.x) {
      float v = w[off + j];
      if (r != nullptr) v = v * ri;      // diag(r)·W̄, as ATen's first product
      if (cg != nullptr) v = v * cg[j];  // ·diag(c_g), its second
      e[off + j] = __float2bfloat16(v);
    }
  }
}

__device__ __forceinline__ float block_sum(float v, float* red) {  // every thread gets the sum; fixed order
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  __syncthreads();  // red is free (a previous call's readers are done)
  if (lane == 0) red[warp] = v;
  __syncthreads();
  float t = 0.f;
  for (int k = 0; k < warps; ++k) t += red[k];
  return t;
}

__global__ void __launch_bounds__(kThreads)
    bwd(const __nv_bfloat16* __restrict__ g, const float* __restrict__ w, const float* __restrict__ r,
        const float* __restrict__ c, float* __restrict__ dw, float* __restrict__ dr, float* __restrict__ partial,
        std::int64_t in, std::int64_t rows_per_group, int chunk) {
  extern __shared__ float dcs[];  // [in]: this chunk's Σ_i G·W·r per column (each thread owns its columns)
  __shared__ float red[kThreads / 32];
  const std::int64_t i0 = static_cast<std::int64_t>(blockIdx.x) * chunk;
  const float* cg = c != nullptr ? c + (i0 / rows_per_group) * in : nullptr;
  for (std::int64_t j = threadIdx.x; j < in; j += blockDim.x) dcs[j] = 0.f;
  for (int k = 0; k < chunk; ++k) {
    const std::int64_t i = i0 + k, off = i * in;
    const float ri = r != nullptr ? r[i] : 1.f;
    float acc = 0.f;
    for (std::int64_t j = threadIdx.x; j < in; j += blockDim.x) {
      const float gv = __bfloat162float(g[off + j]), wv = w[off + j];
      const float ge = cg != nullptr ? gv * cg[j] : gv;  // dL/d(W̄·r): through ·diag(c)
      dw[off + j] = ge * ri;
      acc += ge * wv;
      if (cg != nullptr) dcs[j] += gv * (wv * ri);
    }
    if (dr != nullptr) {
      const float t = block_sum(acc, red);
      if (threadIdx.x == 0) dr[i] = t;
    }
  }
  if (partial == nullptr) return;
  for (std::int64_t j = threadIdx.x; j < in; j += blockDim.x) partial[static_cast<std::int64_t>(blockIdx.x) * in + j] = dcs[j];
}

// dc[g, j] = Σ over group g's chunks of partial[chunk, j]: 32 columns × 32 lanes of chunks, then the lanes in order.
__global__ void __launch_bounds__(1024) sum_chunks(const float* __restrict__ partial, float* __restrict__ dc,
                                                   std::int64_t in, std::int64_t chunks_per_group) {
  __shared__ float red[32][33];
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * 32 + threadIdx.x, grp = blockIdx.y;
  float acc = 0.f;
  if (j < in)
    for (std::int64_t b = threadIdx.y; b < chunks_per_group; b += 32) acc += partial[(grp * chunks_per_group + b) * in + j];
  red[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y != 0 || j >= in) return;
  float t = 0.f;
  for (int k = 0; k < 32; ++k) t += red[k][threadIdx.x];
  dc[grp * in + j] = t;
}

// Rows per backward block: the largest of 16, 8, 4, 2, 1 that divides a group's rows and still leaves at least
// 256 blocks (a 768-row matrix would otherwise run 48 blocks on a 132-SM card). A function of the shape alone.
int chunk_rows(std::int64_t out, std::int64_t rows_per_group) {
  for (int k : {16, 8, 4, 2})
    if (rows_per_group % k == 0 && out / k >= 256) return k;
  return 1;
}

}  // namespace

int lrm_weight_forward(const float* w, const float* r, const float* c, void* w_eff_bf16, std::int64_t out,
                       std::int64_t in, std::int64_t groups, void* stream) {
  const std::int64_t n = out * in;
  if (n <= 0) return 0;
  if (groups < 1 || out % groups != 0) return static_cast<int>(cudaErrorInvalidValue);
  const auto blocks = static_cast<unsigned>(out < 65535 ? out : 65535);
  fwd<<<blocks, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(w, r, c, static_cast<__nv_bfloat16*>(w_eff_bf16),
                                                                  out, in, out / groups);
  return static_cast<int>(cudaGetLastError());
}

std::int64_t lrm_weight_scratch_floats(std::int64_t out, std::int64_t in, std::int64_t groups) {
  if (groups < 1 || out % groups != 0) return 0;
  return (out / chunk_rows(out, out / groups)) * in;
}

int lrm_weight_backward(const void* g_bf16, const float* w, const float* r, const float* c, float* dw, float* dr,
                        float* dc, float* scratch, std::int64_t out, std::int64_t in, std::int64_t groups,
                        void* stream) {
  if (out <= 0 || in <= 0) return 0;
  if (groups < 1 || out % groups != 0 || in > kLrmWeightMaxIn) return static_cast<int>(cudaErrorInvalidValue);
  const auto st = static_cast<cudaStream_t>(stream);
  const std::int64_t rpg = out / groups;
  const int chunk = chunk_rows(out, rpg);
  const std::int64_t chunks = out / chunk;
  const bool want_dc = c != nullptr && dc != nullptr;
  bwd<<<static_cast<unsigned>(chunks), kThreads, sizeof(float) * static_cast<std::size_t>(in), st>>>(
      static_cast<const __nv_bfloat16*>(g_bf16), w, r, c, dw, r != nullptr ? dr : nullptr, want_dc ? scratch : nullptr,
      in, rpg, chunk);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return static_cast<int>(e);
  if (!want_dc) return 0;
  const dim3 grid(static_cast<unsigned>((in + 31) / 32), static_cast<unsigned>(groups)), block(32, 32);
  sum_chunks<<<grid, block, 0, st>>>(scratch, dc, in, chunks / groups);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace gaugelab::gpt2::cuda
