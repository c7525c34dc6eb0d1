// The kernel check's dry run on the CPU (tests/cuda/README.md): the kernels' entry points (gpt2/model/cuda/
// *_kernel.hpp) bound to their host transcriptions (host_kernels.hpp), so the check's harness (inputs, references,
// measures, tolerances, reruns, report) runs through every case without a card.
#include "gpt2/model/cuda/lm_head_ce_kernel.hpp"
#include "gpt2/model/cuda/lrm_weight_kernel.hpp"
#include "gpt2/model/cuda/residual_layer_norm_kernel.hpp"
#include "tests/cuda/host_kernels.hpp"

namespace gaugelab::gpt2::cuda {

int residual_layer_norm_forward(const float* x, const void* branch, const float* gamma, const float* beta, float* sum,
                                void* y, float* mean, float* rstd, std::int64_t rows, std::int64_t cols, float eps,
                                void* stream) {
  return kcheck::host::residual_layer_norm_forward(x, branch, gamma, beta, sum, y, mean, rstd, rows, cols, eps, stream);
}

std::int64_t residual_layer_norm_scratch_floats(std::int64_t rows, std::int64_t cols) {
  return kcheck::host::residual_layer_norm_scratch_floats(rows, cols);
}

int residual_layer_norm_backward(const float* s, const float* mean, const float* rstd, const void* dy, const float* ds,
                                 const float* gamma, float* dx, void* dxb, float* dgamma, float* dbeta, float* scratch,
                                 std::int64_t rows, std::int64_t cols, void* stream) {
  return kcheck::host::residual_layer_norm_backward(s, mean, rstd, dy, ds, gamma, dx, dxb, dgamma, dbeta, scratch,
                                                    rows, cols, stream);
}

int lrm_weight_forward(const float* w, const float* r, const float* c, void* e, std::int64_t out, std::int64_t in,
                       std::int64_t groups, void* stream) {
  return kcheck::host::lrm_weight_forward(w, r, c, e, out, in, groups, stream);
}

std::int64_t lrm_weight_scratch_floats(std::int64_t out, std::int64_t in, std::int64_t groups) {
  return kcheck::host::lrm_weight_scratch_floats(out, in, groups);
}

int lrm_weight_backward(const void* g, const float* w, const float* r, const float* c, float* dw, float* dr, float* dc,
                        float* scratch, std::int64_t out, std::int64_t in, std::int64_t groups, void* stream) {
  return kcheck::host::lrm_weight_backward(g, w, r, c, dw, dr, dc, scratch, out, in, groups, stream);
}

int lm_head_ce_rows_bf16(void* logits, std::int64_t rows, std::int64_t vocab, std::int64_t ld,
                         const std::int64_t* targets, const float* scale, float* row_loss, bool write_grad,
                         void* stream) {
  return kcheck::host::lm_head_ce_rows_bf16(logits, rows, vocab, ld, targets, scale, row_loss, write_grad, stream);
}

}  // namespace gaugelab::gpt2::cuda
