#include "gpt2/train/step_graph.hpp"

#include <exception>
#include <stdexcept>
#include <utility>

#include <ATen/TensorOperators.h>
#include <ATen/ops/_foreach_add.h>
#include <ATen/ops/_foreach_zero.h>
#include <ATen/ops/zeros_like.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/autograd.h>

#include "gpt2/model/cuda_side.hpp"

namespace gaugelab::gpt2 {

namespace {

// The first line of an exception's text (LibTorch's errors carry their C++ frames on the lines after it).
std::string first_line(const std::exception& e) {
  const auto* c10 = dynamic_cast<const c10::Error*>(&e);
  std::string s = c10 != nullptr ? c10->what_without_backtrace() : e.what();
  const auto nl = s.find('\n');
  if (nl != std::string::npos) s.resize(nl);
  return s;
}

}  // namespace

// A capture an exception left open on the side stream is ended by graph->abandon() (CudaGraph, cuda_side.hpp), so
// that no later CUDA call of the process meets a capturing stream.
struct MicroStepGraph::State {
  std::unique_ptr<CudaGraph> graph = cuda_side().new_graph();
  LmHeadWorkspace ws;                // the loss's buffers, the graph's own: an eager loss may grow the model's
  at::Tensor in, tgt, loss;          // static: [B, T] int64 inputs and targets, the float32 loss
  std::vector<at::Tensor> bufs;      // [n] a gradient buffer per parameter (undefined: the loss does not reach it)
  std::vector<at::Tensor> reached;   // the defined ones, in order (the graph adds into these)
  std::vector<const void*> storage;  // [n] each parameter's data pointer at the capture
  std::vector<bool> reach;           // [n] whether the loss reaches the parameter
};

std::string MicroStepGraph::refusal(const GPT& model, c10::Device device) {
  if (!device.is_cuda()) return "--cuda-graph on needs --device cuda (a CUDA graph replays GPU kernels)";
  if (model.config().dropout > 0)
    return "--cuda-graph on needs --dropout 0 (dropout's random draws are not replayed per step here)";
  return "";
}

MicroStepGraph::MicroStepGraph(GPT& model, std::vector<at::Tensor> params, Precision precision,
                               std::int64_t grad_accum)
    : model_(model), params_(std::move(params)), precision_(precision), grad_accum_(grad_accum) {
  const std::string why = refusal(model, model.device());
  if (!why.empty()) throw std::invalid_argument(why);
}

MicroStepGraph::~MicroStepGraph() = default;

bool MicroStepGraph::stale() const {
  for (std::size_t i = 0; i < params_.size(); ++i)
    if (params_[i].data_ptr() != s_->storage[i]) return true;
  return false;
}

void MicroStepGraph::capture(const at::Tensor& inputs, const at::Tensor& targets, std::int64_t step) {
  s_.reset();  // a previous graph and its pool go first
  auto st = std::make_unique<State>();
  st->ws.kernel = model_.lm_head_kernel();
  st->in = inputs.clone();
  st->tgt = targets.clone();
  // The graph is captured on a side stream (CUDA graphs cannot capture the legacy default stream), after warm-up
  // passes on that stream (cuBLAS, cuDNN and the allocator settle outside the capture). Their gradients are dropped.
  auto pass = [&] {  // the loss and its gradients [n] (undefined where the loss does not reach)
    at::Tensor loss;
    {
      AutocastScope autocast(model_.device(), precision_);
      loss = model_.loss(st->in, st->tgt, &st->ws);
    }
    // The same op as the eager step's loss / grad_accum (a multiplication by its inverse can differ by an ulp).
    std::vector<at::Tensor> g = torch::autograd::grad({loss / static_cast<double>(grad_accum_)}, params_, /*grad_outputs=*/{},
                                                      /*retain_graph=*/false, /*create_graph=*/false,
                                                      /*allow_unused=*/true);
    return std::pair{loss, g};
  };
  const CudaSide& cuda = cuda_side();
  {
    // the side stream starts after what the main stream has queued (the batch's copy)
    const std::unique_ptr<CudaSideStream> side = cuda.enter_side_stream();
    std::vector<at::Tensor> first;
    for (int w = 0; w < 2; ++w) first = pass().second;
    for (std::size_t i = 0; i < params_.size(); ++i) {
      st->reach.push_back(first[i].defined());
      st->bufs.push_back(first[i].defined() ? at::zeros_like(params_[i]) : at::Tensor());
      if (first[i].defined()) st->reached.push_back(st->bufs.back());
      st->storage.push_back(params_[i].data_ptr());
    }
    first.clear();
    // The warm-ups' activations go back to the card before the capture allocates its own from the graph's private
    // pool, which cannot reuse blocks the allocator keeps cached for eager work: otherwise the capture needs a second
    // activation peak (a fitted micro-batch would run out of memory here). The fit reserves the pool's one peak
    // (micro_batch.hpp).
    cuda.synchronize();
    cuda.empty_cache();
    bool same_reach = true;  // checked after the capture has ended
    try {
      st->graph->capture_begin();
      auto [loss, g] = pass();
      std::vector<at::Tensor> got, into;
      for (std::size_t i = 0; i < g.size(); ++i) {
        same_reach = same_reach && g[i].defined() == st->reach[i];
        if (g[i].defined() && st->bufs[i].defined()) got.push_back(g[i]), into.push_back(st->bufs[i]);
      }
      if (!into.empty()) at::_foreach_add_(into, got);
      st->loss = loss.detach();
      st->graph->capture_end();
    } catch (const std::exception& e) {  // the pass's tensors are gone; the capture is ended, its graph destroyed
      st->graph->abandon();
      st.reset();
      throw std::runtime_error(capture_failure(step, first_line(e)));
    } catch (...) {
      st->graph->abandon();
      st.reset();
      throw std::runtime_error(capture_failure(step, "an exception of unknown type"));
    }
    if (!same_reach)
      throw std::logic_error("MicroStepGraph: the captured pass reached other parameters than the warm-up");
    side->join();  // the main stream waits for the capture's work and is current again
  }
  s_ = std::move(st);
}

std::string MicroStepGraph::capture_failure(std::int64_t step, const std::string& what) {
  return "CUDA graph capture failed at step " + std::to_string(step) + " (" + what + "): rerun with --cuda-graph off";
}

at::Tensor MicroStepGraph::run(const at::Tensor& inputs, const at::Tensor& targets, bool first, std::int64_t step) {
  if (s_ && (inputs.sizes() != s_->in.sizes() || targets.sizes() != s_->tgt.sizes())) return {};
  if (!s_ || stale()) capture(inputs, targets, step);
  // .grad -> the graph's buffers. The step's first micro-step starts them at 0 (zero_grad has left .grad
  // undefined); later, a .grad that is not its buffer (an eager micro-step's, or a previous capture's buffer) is
  // taken over, so the sum holds whichever way each micro-step ran.
  if (first && !s_->reached.empty()) at::_foreach_zero_(s_->reached);
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const at::Tensor& buf = s_->bufs[i];
    if (!buf.defined()) continue;
    const at::Tensor g = params_[i].grad();
    if (g.is_same(buf)) continue;
    if (first || !g.defined()) {
      if (!first) buf.zero_();
    } else {
      buf.copy_(g);
    }
    params_[i].mutable_grad() = buf;
  }
  s_->in.copy_(inputs);
  s_->tgt.copy_(targets);
  s_->graph->replay();
  return s_->loss.clone();
}

}  // namespace gaugelab::gpt2
