// The three kernels of gpt2/model/cuda/ transcribed to host code (host_kernels.cpp): the entry points of
// *_kernel.hpp with the same signatures and contracts, float32 arithmetic in the kernels' partition and order
// (lanes, butterflies, blocks, chunks), expf/logf/1/sqrtf for the device's fast intrinsics. Two users: the
// kernel check's dry run on the CPU (host_entry_points.cpp binds them to the kernels' names; tests/cuda/README.md)
// and the autograd plumbing test of the kernels' wrappers (tests/gpt2/test_fused_plumbing.cpp). They say nothing
// about the CUDA kernels themselves, which only a card can check.
// No LibTorch header: plain pointers, as the kernels' headers. The stream argument is ignored.
#pragma once

#include <cstdint>

namespace gaugelab::kcheck::host {

// residual_layer_norm_kernel.hpp
int residual_layer_norm_forward(const float* x, const void* branch_bf16, const float* gamma, const float* beta,
                                float* sum, void* y_bf16, float* mean, float* rstd, std::int64_t rows,
                                std::int64_t cols, float eps, void* stream);
std::int64_t residual_layer_norm_scratch_floats(std::int64_t rows, std::int64_t cols);
int residual_layer_norm_backward(const float* s, const float* mean, const float* rstd, const void* dy_bf16,
                                 const float* ds, const float* gamma, float* dx, void* dx_bf16, float* dgamma,
                                 float* dbeta, float* scratch, std::int64_t rows, std::int64_t cols, void* stream);

// lrm_weight_kernel.hpp
int lrm_weight_forward(const float* w, const float* r, const float* c, void* w_eff_bf16, std::int64_t out,
                       std::int64_t in, std::int64_t groups, void* stream);
std::int64_t lrm_weight_scratch_floats(std::int64_t out, std::int64_t in, std::int64_t groups);
int lrm_weight_backward(const void* g_bf16, const float* w, const float* r, const float* c, float* dw, float* dr,
                        float* dc, float* scratch, std::int64_t out, std::int64_t in, std::int64_t groups,
                        void* stream);

// lm_head_ce_kernel.hpp
int lm_head_ce_rows_bf16(void* logits, std::int64_t rows, std::int64_t vocab, std::int64_t ld,
                         const std::int64_t* targets, const float* scale, float* row_loss, bool write_grad,
                         void* stream);

}  // namespace gaugelab::kcheck::host
