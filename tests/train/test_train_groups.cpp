// Each condition's parameter groups by name: which tensors the trainer decays by how much, which it
// clips, which Muon steps — the experiment's one variable (the Q/K multiplier decay) spelled out.
#include <map>
#include <string>

#include "gpt2/train/conditions.hpp"
#include "gpt2/train/optimizer.hpp"
#include "gpt2/train/setup.hpp"
#include "tests/gpt2/gpt2_test_helpers.hpp"
#include "tests/gpt2/gpt2_catch.hpp"
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab;

namespace {

struct Entry {
  std::string group;
  double weight_decay;
  bool clipped;
  bool muon;
};

std::map<std::string, Entry> groups_of(const gpt2::TrainOptions& o, bool bias = false, const std::string& lrm = "default") {
  gpt2::ModelConfig c = test::nano_config();
  c.bias = bias;
  c.lrm = gpt2::LrmPlacement::parse(lrm);
  gpt2::GPT m(c, 1);
  gpt2::TrainOptimizer opt(m, gpt2::optimizer_settings(o, gpt2::condition(o.condition), c10::Device(c10::kCPU)));
  std::map<std::string, Entry> by_name;
  for (const auto& g : opt.groups())
    for (const std::string& n : g.names) by_name[n] = {g.name, g.weight_decay, g.clipped, g.rule == core::RuleKind::muon};
  return by_name;
}

gpt2::TrainOptions with(const std::string& condition) {
  gpt2::TrainOptions o;
  o.condition = condition;
  return o;
}

}  // namespace

TEST_CASE("groups: the Q/K row multipliers decay under A and D (wd), not under B, C, E, Dcap, Q or QKclip") {
  // Seed 000 §4.1 (A decays, B and C do not), §5 (D keeps the decay as its magnitude control, Dcap caps
  // instead): stated here, and the conditions table must agree with it.
  const std::map<std::string, bool> expected = {{"A", true},  {"B", false}, {"C", false},     {"D", true},
                                                {"Dcap", false}, {"E", false}, {"Q", false}, {"QKclip", false}};
  for (const auto& [cond, decayed] : expected) CHECK(gpt2::condition(cond).decays_qk == decayed);
  for (const gpt2::Condition& c : gpt2::conditions()) {
    if (!expected.count(c.key)) continue;  // the rows without multipliers (N and the projections)
    const bool decayed = expected.at(c.key);
    gpt2::TrainOptions o = with(c.key);
    const auto g = groups_of(o);
    INFO(c.key);
    for (const char* n : {"h.0.attn.c_attn.r_q", "h.1.attn.c_attn.r_k"}) {
      CHECK(g.at(n).group == "multipliers_qk");
      CHECK(g.at(n).weight_decay == (decayed ? 2e-3 : 0.0));
      CHECK_FALSE(g.at(n).clipped);
    }
    // Every other multiplier keeps λ_lrm in every condition (seed 000 §4.1).
    for (const char* n : {"h.0.attn.c_attn.c_q", "h.0.attn.c_attn.r_v", "h.0.attn.c_proj.c", "h.1.mlp.c_fc.r", "h.1.mlp.c_proj.c"}) {
      CHECK(g.at(n).group == "multipliers_other");
      CHECK(g.at(n).weight_decay == 2e-3);
    }
  }
}

TEST_CASE("groups: matrices and embeddings decay at 0.1 as nanoGPT, LayerNorm and biases not at all") {
  for (const bool bias : {false, true}) {
    const auto g = groups_of(with("A"), bias);
    INFO("bias " << bias);
    for (const char* n : {"h.0.attn.c_attn.weight", "h.0.attn.c_proj.weight", "h.1.mlp.c_fc.weight", "h.1.mlp.c_proj.weight"}) {
      CHECK(g.at(n).group == "matrices");
      CHECK(g.at(n).weight_decay == 0.1);
      CHECK(g.at(n).clipped);
    }
    for (const char* n : {"wte.weight", "wpe.weight"}) {
      CHECK(g.at(n).group == "embeddings");
      CHECK(g.at(n).weight_decay == 0.1);
    }
    CHECK(g.at("ln_f.weight").group == "biases_norms");
    CHECK(g.at("ln_f.weight").weight_decay == 0.0);
    CHECK(g.count("h.0.attn.c_attn.bias") == (bias ? 1u : 0u));
    CHECK(g.count("ln_f.bias") == (bias ? 1u : 0u));
    if (bias) CHECK(g.at("h.0.mlp.c_fc.bias").weight_decay == 0.0);
  }
}

TEST_CASE("groups: without multipliers only nanoGPT's two kinds remain, Muon takes the hidden matrices only") {
  const auto plain = groups_of(with("C"), false, "none");
  for (const auto& [name, e] : plain) CHECK((e.group == "matrices" || e.group == "embeddings" || e.group == "biases_norms"));
  gpt2::TrainOptions o = with("A");
  o.optimizer = core::RuleKind::muon;
  const auto g = groups_of(o);
  CHECK(g.at("h.0.attn.c_attn.weight").muon);
  CHECK(g.at("h.0.attn.c_attn.weight").weight_decay == o.muon_wd);
  CHECK_FALSE(g.at("wte.weight").muon);
  CHECK_FALSE(g.at("h.0.attn.c_attn.r_q").muon);
  o.clip_multipliers = true;
  CHECK(groups_of(o).at("h.0.attn.c_attn.r_q").clipped);
}

}  // namespace GAUGELAB_TU
