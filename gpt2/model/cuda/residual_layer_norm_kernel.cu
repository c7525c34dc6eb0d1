// residual_layer_norm_kernel.hpp's kernels: one warp per row; the backward's dγ/dβ per warp in shared
// memory, per block into scratch, then summed over blocks by a second kernel, every sum in a fixed order.
#include "gpt2/model/cuda/residual_layer_norm_kernel.hpp"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace gaugelab::gpt2::cuda {

namespace {

constexpr int kFwdWarps = 8;         // rows per forward block
constexpr int kMaxBwdWarps = 4;      // rows in flight per backward block
constexpr int kBwdSmemFloats = 2 * static_cast<int>(kResidualLayerNormMaxCols);  // 48 KB: dγ, dβ [warps][cols]
constexpr std::int64_t kMaxBwdBlocks = 1024;

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;  // every lane holds the sum (a fixed butterfly: the same order on every run)
}

__global__ void __launch_bounds__(kFwdWarps * 32)
    fwd_rows(const float* __restrict__ x, const __nv_bfloat16* __restrict__ branch, const float* __restrict__ gamma,
             const float* __restrict__ beta, float* __restrict__ sum, __nv_bfloat16* __restrict__ y,
             float* __restrict__ mean, float* __restrict__ rstd, std::int64_t rows, int cols, float eps) {
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * kFwdWarps + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const std::int64_t off = row * cols;
  float acc = 0.f;
  if (branch != nullptr) {
    for (int c = lane; c < cols; c += 32) {
      const float v = x[off + c] + __bfloat162float(branch[off + c]);  // as ATen's float32 + bf16 add
      sum[off + c] = v;
      acc += v;
    }
  } else {
    for (int c = lane; c < cols; c += 32) acc += x[off + c];
  }
  const float* s = branch != nullptr ? sum + off : x + off;  // this thread's own writes: visible to it
  const float mu = warp_sum(acc) / cols;
  float var = 0.f;
  for (int c = lane; c < cols; c += 32) {
    const float d = s[c] - mu;
    var += d * d;
  }
  const float rs = rsqrtf(warp_sum(var) / cols + eps);
  for (int c = lane; c < cols; c += 32) {
    const float v = (s[c] - mu) * rs * gamma[c] + (beta != nullptr ? beta[c] : 0.f);
    y[off + c] = __float2bfloat16(v);
  }
  if (lane == 0) mean[row] = mu, rstd[row] = rs;
}

int bwd_warps(std::int64_t cols) {
  const std::int64_t w = kBwdSmemFloats / (2 * cols);
  return static_cast<int>(w < 1 ? 1 : (w > kMaxBwdWarps ? kMaxBwdWarps : w));
}

std::int64_t bwd_blocks(std::int64_t rows, std::int64_t cols) {
  const std::int64_t w = bwd_warps(cols), need = (rows + w - 1) / w;
  return need < kMaxBwdBlocks ? (need < 1 ? 1 : need) : kMaxBwdBlocks;
}

// Block b's warp w takes rows b·W + w, then + G·W, ...: a partition fixed by (rows, cols) alone.
__global__ void bwd_rows(const float* __restrict__ s_all, const float* __restrict__ mean,
                         const float* __restrict__ rstd, const __nv_bfloat16* __restrict__ dy_all,
                         const float* __restrict__ ds_all, const float* __restrict__ gamma, float* __restrict__ dx_all,
                         __nv_bfloat16* __restrict__ dxb_all, float* __restrict__ scratch, std::int64_t rows,
                         int cols) {
  extern __shared__ float smem[];  // [2][W][cols]: dγ then dβ partials, one slice per warp
  const int warps = blockDim.x / 32, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  float* dg = smem + warp * cols;
  float* db = smem + (warps + warp) * cols;
  for (int c = lane; c < cols; c += 32) dg[c] = 0.f, db[c] = 0.f;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * warps;
  for (std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * warps + warp; row < rows; row += stride) {
    const std::int64_t off = row * cols;
    const float* s = s_all + off;
    const __nv_bfloat16* dy = dy_all + off;
    const float mu = mean[row], rs = rstd[row];
    float a = 0.f, b = 0.f;
    for (int c = lane; c < cols; c += 32) {
      const float xhat = (s[c] - mu) * rs, g = __bfloat162float(dy[c]), dn = g * gamma[c];
      a += dn;
      b += dn * xhat;
      dg[c] += g * xhat;
      db[c] += g;
    }
    a = warp_sum(a) / cols;
    b = warp_sum(b) / cols;
    for (int c = lane; c < cols; c += 32) {
      const float xhat = (s[c] - mu) * rs, dn = __bfloat162float(dy[c]) * gamma[c];
      float v = (dn - a - xhat * b) * rs;
      if (ds_all != nullptr) v += ds_all[off + c];
      dx_all[off + c] = v;
      if (dxb_all != nullptr) dxb_all[off + c] = __float2bfloat16(v);
    }
  }
  __syncthreads();
  float* part_g = scratch + static_cast<std::int64_t>(blockIdx.x) * cols;
  float* part_b = scratch + (static_cast<std::int64_t>(gridDim.x) + blockIdx.x) * cols;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    float g = 0.f, bb = 0.f;
    for (int w = 0; w < warps; ++w) g += smem[w * cols + c], bb += smem[(warps + w) * cols + c];
    part_g[c] = g;
    part_b[c] = bb;
  }
}

// out[c] = Σ_b part[b][c] over `blocks` partials; blockIdx.y picks dγ (0) or dβ (1). 32 columns × 8 lanes of b.
__global__ void __launch_bounds__(256) sum_partials(const float* __restrict__ scratch, float* __restrict__ dgamma,
                                                    float* __restrict__ dbeta, int blocks, int cols) {
  __shared__ float red[8][33];
  const int c = blockIdx.x * 32 + threadIdx.x, k = threadIdx.y;
  const float* part = scratch + static_cast<std::int64_t>(blockIdx.y) * blocks * cols;
  float acc = 0.f;
  if (c < cols)
    for (int b = k; b < blocks; b += 8) acc += part[static_cast<std::int64_t>(b) * cols + c];
  red[k][threadIdx.x] = acc;
  __syncthreads();
  if (k != 0 || c >= cols) return;
  float total = 0.f;
  for (int j = 0; j < 8; ++j) total += red[j][threadIdx.x];
  float* out = blockIdx.y == 0 ? dgamma : dbeta;
  out[c] = total;
}

}  // namespace

int residual_layer_norm_forward(const float* x, const void* branch_bf16, const float* gamma, const float* beta,
                                float* sum, void* y_bf16, float* mean, float* rstd, std::int64_t rows,
                                std::int64_t cols, float eps, void* stream) {
  if (rows <= 0 || cols <= 0) return 0;
  const auto blocks = static_cast<unsigned>((rows + kFwdWarps - 1) / kFwdWarps);
  fwd_rows<<<blocks, kFwdWarps * 32, 0, static_cast<cudaStream_t>(stream)>>>(
      x, static_cast<const __nv_bfloat16*>(branch_bf16), gamma, beta, sum, static_cast<__nv_bfloat16*>(y_bf16), mean,
      rstd, rows, static_cast<int>(cols), eps);
  return static_cast<int>(cudaGetLastError());
}

std::int64_t residual_layer_norm_scratch_floats(std::int64_t rows, std::int64_t cols) {
  return 2 * bwd_blocks(rows, cols) * cols;
}

int residual_layer_norm_backward(const float* s, const float* mean, const float* rstd, const void* dy_bf16,
                                 const float* ds, const float* gamma, float* dx, void* dx_bf16, float* dgamma,
                                 float* dbeta, float* scratch, std::int64_t rows, std::int64_t cols, void* stream) {
  if (cols <= 0) return 0;
  if (2 * cols > kBwdSmemFloats) return static_cast<int>(cudaErrorInvalidValue);  // one warp's partials must fit
  const auto st = static_cast<cudaStream_t>(stream);
  const int warps = bwd_warps(cols);
  const auto blocks = static_cast<int>(bwd_blocks(rows, cols));
  const std::size_t smem = sizeof(float) * 2 * static_cast<std::size_t>(warps) * cols;
  bwd_rows<<<blocks, warps * 32, smem, st>>>(s, mean, rstd, static_cast<const __nv_bfloat16*>(dy_bf16), ds, gamma, dx,
                                             static_cast<__nv_bfloat16*>(dx_bf16), scratch, rows, static_cast<int>(cols));
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return static_cast<int>(e);
  const dim3 grid(static_cast<unsigned>((cols + 31) / 32), dbeta != nullptr ? 2u : 1u), block(32, 8);
  sum_partials<<<grid, block, 0, st>>>(scratch, dgamma, dbeta, blocks, static_cast<int>(cols));
  return static_cast<int>(cudaGetLastError());
}

}  // namespace gaugelab::gpt2::cuda
