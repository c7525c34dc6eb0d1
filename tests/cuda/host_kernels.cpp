// The three kernels of gpt2/model/cuda/ transcribed to host code (host_kernels.hpp says what and for whom).
// Each section follows its .cu file: the same launch geometry (warps, blocks, chunks), the same per-lane
// partial sums and the same butterfly and block reductions, in float32.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "tests/cuda/host_kernels.hpp"

#include "gpt2/model/cuda/lrm_weight_kernel.hpp"
#include "gpt2/model/cuda/residual_layer_norm_kernel.hpp"
#include "tests/cuda/kernel_reference.hpp"

namespace gaugelab::kcheck::host {

namespace {

constexpr int kInvalidValue = 1;  // cudaErrorInvalidValue

float bf(const void* p, std::int64_t i) { return ref::bf16_to_float(static_cast<const std::uint16_t*>(p)[i]); }
void put_bf(void* p, std::int64_t i, float v) { static_cast<std::uint16_t*>(p)[i] = ref::float_to_bf16(v); }

// __shfl_xor_sync's butterfly over 32 lanes: every lane ends with the same float32 sum.
float warp_sum(float v[32]) {
  for (int o = 16; o > 0; o >>= 1) {
    float t[32];
    for (int l = 0; l < 32; ++l) t[l] = v[l] + v[l ^ o];
    std::memcpy(v, t, sizeof t);
  }
  return v[0];
}

// ---- residual_layer_norm_kernel.cu ----
constexpr int kMaxBwdWarps = 4;
constexpr std::int64_t kBwdSmemFloats = 2 * gpt2::cuda::kResidualLayerNormMaxCols, kMaxBwdBlocks = 1024;

int bwd_warps(std::int64_t cols) {
  const std::int64_t w = kBwdSmemFloats / (2 * cols);
  return static_cast<int>(w < 1 ? 1 : (w > kMaxBwdWarps ? kMaxBwdWarps : w));
}

std::int64_t bwd_blocks(std::int64_t rows, std::int64_t cols) {
  const std::int64_t w = bwd_warps(cols), need = (rows + w - 1) / w;
  return need < kMaxBwdBlocks ? (need < 1 ? 1 : need) : kMaxBwdBlocks;
}

// ---- lrm_weight_kernel.cu ----
constexpr int kLrmThreads = 256;

int chunk_rows(std::int64_t out, std::int64_t rows_per_group) {
  for (int k : {16, 8, 4, 2})
    if (rows_per_group % k == 0 && out / k >= 256) return k;
  return 1;
}

// ---- lm_head_ce_kernel.cu ----
constexpr int kCeThreads = 1024;

void merge(float& m, float& s, float m2, float s2) {
  const float mn = std::max(m, m2);
  s = (m == -FLT_MAX ? 0.f : s * std::exp(m - mn)) + (m2 == -FLT_MAX ? 0.f : s2 * std::exp(m2 - mn));
  m = mn;
}

void warp_merge(float* m, float* s) {  // 32 lanes, butterfly
  for (int o = 16; o > 0; o >>= 1) {
    float tm[32], ts[32];
    for (int l = 0; l < 32; ++l) {
      tm[l] = m[l], ts[l] = s[l];
      merge(tm[l], ts[l], m[l ^ o], s[l ^ o]);
    }
    std::memcpy(m, tm, sizeof tm);
    std::memcpy(s, ts, sizeof ts);
  }
}

}  // namespace

int residual_layer_norm_forward(const float* x, const void* branch, const float* gamma, const float* beta, float* sum,
                                void* y, float* mean, float* rstd, std::int64_t rows, std::int64_t cols, float eps,
                                void*) {
  for (std::int64_t row = 0; row < rows; ++row) {
    const std::int64_t off = row * cols;
    float acc[32] = {}, var[32] = {};
    for (std::int64_t c = 0; c < cols; ++c) {
      float v = x[off + c];
      if (branch != nullptr) v = x[off + c] + bf(branch, off + c), sum[off + c] = v;
      acc[c % 32] += v;
    }
    const float* s = branch != nullptr ? sum + off : x + off;
    const float mu = warp_sum(acc) / static_cast<float>(cols);
    for (std::int64_t c = 0; c < cols; ++c) {
      const float d = s[c] - mu;
      var[c % 32] += d * d;
    }
    const float rs = 1.f / std::sqrt(warp_sum(var) / static_cast<float>(cols) + eps);
    for (std::int64_t c = 0; c < cols; ++c)
      put_bf(y, off + c, (s[c] - mu) * rs * gamma[c] + (beta != nullptr ? beta[c] : 0.f));
    mean[row] = mu, rstd[row] = rs;
  }
  return 0;
}

std::int64_t residual_layer_norm_scratch_floats(std::int64_t rows, std::int64_t cols) {
  return 2 * bwd_blocks(rows, cols) * cols;
}

int residual_layer_norm_backward(const float* s_all, const float* mean, const float* rstd, const void* dy, const float* ds,
                                 const float* gamma, float* dx, void* dxb, float* dgamma, float* dbeta, float* scratch,
                                 std::int64_t rows, std::int64_t cols, void*) {
  if (cols <= 0) return 0;
  if (2 * cols > kBwdSmemFloats) return kInvalidValue;
  const int warps = bwd_warps(cols);
  const std::int64_t blocks = bwd_blocks(rows, cols), stride = blocks * warps;
  std::vector<float> smem(static_cast<std::size_t>(2 * warps * cols));
  for (std::int64_t blk = 0; blk < blocks; ++blk) {
    std::fill(smem.begin(), smem.end(), 0.f);
    for (int w = 0; w < warps; ++w) {
      float* dg = smem.data() + w * cols;
      float* db = smem.data() + (warps + w) * cols;
      for (std::int64_t row = blk * warps + w; row < rows; row += stride) {
        const std::int64_t off = row * cols;
        const float mu = mean[row], rs = rstd[row];
        float a[32] = {}, b[32] = {};
        for (std::int64_t c = 0; c < cols; ++c) {
          const float xhat = (s_all[off + c] - mu) * rs, g = bf(dy, off + c), dn = g * gamma[c];
          a[c % 32] += dn;
          b[c % 32] += dn * xhat;
          dg[c] += g * xhat;
          db[c] += g;
        }
        const float am = warp_sum(a) / static_cast<float>(cols), bm = warp_sum(b) / static_cast<float>(cols);
        for (std::int64_t c = 0; c < cols; ++c) {
          const float xhat = (s_all[off + c] - mu) * rs, dn = bf(dy, off + c) * gamma[c];
          float v = (dn - am - xhat * bm) * rs;
          if (ds != nullptr) v += ds[off + c];
          dx[off + c] = v;
          if (dxb != nullptr) put_bf(dxb, off + c, v);
        }
      }
    }
    for (std::int64_t c = 0; c < cols; ++c) {
      float g = 0.f, bb = 0.f;
      for (int w = 0; w < warps; ++w) g += smem[static_cast<std::size_t>(w * cols + c)], bb += smem[static_cast<std::size_t>((warps + w) * cols + c)];
      scratch[blk * cols + c] = g;
      scratch[(blocks + blk) * cols + c] = bb;
    }
  }
  for (int which = 0; which < (dbeta != nullptr ? 2 : 1); ++which) {
    const float* part = scratch + which * blocks * cols;
    for (std::int64_t c = 0; c < cols; ++c) {
      float red[8] = {};
      for (int k = 0; k < 8; ++k)
        for (std::int64_t b = k; b < blocks; b += 8) red[k] += part[b * cols + c];
      float total = 0.f;
      for (float v : red) total += v;
      (which == 0 ? dgamma : dbeta)[c] = total;
    }
  }
  return 0;
}

int lrm_weight_forward(const float* w, const float* r, const float* c, void* e, std::int64_t out, std::int64_t in,
                       std::int64_t groups, void*) {
  if (out * in <= 0) return 0;
  if (groups < 1 || out % groups != 0) return kInvalidValue;
  const std::int64_t rpg = out / groups;
  for (std::int64_t i = 0; i < out; ++i)
    for (std::int64_t j = 0; j < in; ++j) {
      float v = w[i * in + j];
      if (r != nullptr) v = v * r[i];
      if (c != nullptr) v = v * c[(i / rpg) * in + j];
      put_bf(e, i * in + j, v);
    }
  return 0;
}

std::int64_t lrm_weight_scratch_floats(std::int64_t out, std::int64_t in, std::int64_t groups) {
  if (groups < 1 || out % groups != 0) return 0;
  return (out / chunk_rows(out, out / groups)) * in;
}

int lrm_weight_backward(const void* g, const float* w, const float* r, const float* c, float* dw, float* dr, float* dc,
                        float* scratch, std::int64_t out, std::int64_t in, std::int64_t groups, void*) {
  if (out <= 0 || in <= 0) return 0;
  if (groups < 1 || out % groups != 0 || in > gpt2::cuda::kLrmWeightMaxIn) return kInvalidValue;
  const std::int64_t rpg = out / groups;
  const int chunk = chunk_rows(out, rpg);
  const std::int64_t chunks = out / chunk;
  const bool want_dc = c != nullptr && dc != nullptr;
  std::vector<float> dcs(static_cast<std::size_t>(in));
  for (std::int64_t blk = 0; blk < chunks; ++blk) {
    const std::int64_t i0 = blk * chunk;
    const float* cg = c != nullptr ? c + (i0 / rpg) * in : nullptr;
    std::fill(dcs.begin(), dcs.end(), 0.f);
    for (int k = 0; k < chunk; ++k) {
      const std::int64_t i = i0 + k, off = i * in;
      const float ri = r != nullptr ? r[i] : 1.f;
      float acc[kLrmThreads] = {};
      for (std::int64_t j = 0; j < in; ++j) {
        const float gv = bf(g, off + j), wv = w[off + j];
        const float ge = cg != nullptr ? gv * cg[j] : gv;
        dw[off + j] = ge * ri;
        acc[j % kLrmThreads] += ge * wv;
        if (cg != nullptr) dcs[static_cast<std::size_t>(j)] += gv * (wv * ri);
      }
      if (r != nullptr && dr != nullptr) {
        float red[kLrmThreads / 32];
        for (int wp = 0; wp < kLrmThreads / 32; ++wp) red[wp] = warp_sum(acc + 32 * wp);
        float t = 0.f;
        for (float v : red) t += v;
        dr[i] = t;
      }
    }
    if (want_dc)
      for (std::int64_t j = 0; j < in; ++j) scratch[blk * in + j] = dcs[static_cast<std::size_t>(j)];
  }
  if (!want_dc) return 0;
  const std::int64_t per_group = chunks / groups;
  for (std::int64_t grp = 0; grp < groups; ++grp)
    for (std::int64_t j = 0; j < in; ++j) {
      float red[32] = {};
      for (int y = 0; y < 32; ++y)
        for (std::int64_t b = y; b < per_group; b += 32) red[y] += scratch[(grp * per_group + b) * in + j];
      float t = 0.f;
      for (float v : red) t += v;
      dc[grp * in + j] = t;
    }
  return 0;
}

int lm_head_ce_rows_bf16(void* logits, std::int64_t rows, std::int64_t vocab, std::int64_t ld,
                         const std::int64_t* targets, const float* scale, float* row_loss, bool write_grad, void*) {
  const bool vec = ld % 8 == 0 && reinterpret_cast<std::uintptr_t>(logits) % 16 == 0;
  std::vector<float> m(kCeThreads), s(kCeThreads);
  for (std::int64_t row = 0; row < rows; ++row) {
    const std::int64_t base = row * ld;
    std::fill(m.begin(), m.end(), -FLT_MAX);
    std::fill(s.begin(), s.end(), 0.f);
    std::int64_t scalar_from = 0;
    if (vec) {
      const std::int64_t nv = vocab / 8;
      for (std::int64_t v = 0; v < nv; ++v) {
        float lm = -FLT_MAX, ls = 0.f;
        for (int k = 0; k < 8; ++k) lm = std::max(lm, bf(logits, base + v * 8 + k));
        for (int k = 0; k < 8; ++k) ls += std::exp(bf(logits, base + v * 8 + k) - lm);
        merge(m[static_cast<std::size_t>(v % kCeThreads)], s[static_cast<std::size_t>(v % kCeThreads)], lm, ls);
      }
      scalar_from = nv * 8;
    }
    for (std::int64_t j = scalar_from; j < vocab; ++j) {
      const auto t = static_cast<std::size_t>((j - scalar_from) % kCeThreads);
      merge(m[t], s[t], bf(logits, base + j), 1.f);
    }
    float wm[32], ws[32];
    for (int wp = 0; wp < 32; ++wp) {
      warp_merge(m.data() + 32 * wp, s.data() + 32 * wp);
      wm[wp] = m[static_cast<std::size_t>(32 * wp)], ws[wp] = s[static_cast<std::size_t>(32 * wp)];
    }
    warp_merge(wm, ws);
    const float lse = wm[0] + std::log(ws[0]);
    const std::int64_t t = targets[row] < 0 ? 0 : targets[row];
    row_loss[row] = lse - bf(logits, base + t);
    if (!write_grad) continue;
    const float sc = scale[row];
    for (std::int64_t j = 0; j < ld; ++j) {
      const float p = j < vocab ? std::exp(bf(logits, base + j) - lse) : 0.f;
      put_bf(logits, base + j, (p - (j == t ? 1.f : 0.f)) * sc);
    }
  }
  return 0;
}

}  // namespace gaugelab::kcheck::host
