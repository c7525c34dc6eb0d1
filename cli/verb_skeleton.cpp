#include "verb_skeleton.hpp"

#include <iostream>
#include <utility>

namespace gaugelab::cli {

io::Provenance verb_provenance(const std::string& kind, const std::string& verb, const Args& args,
                               nlohmann::json config, std::uint64_t seed, int threads) {
  io::Provenance prov{kind, {"gaugelab", verb}, std::move(config), seed, threads};
  prov.argv.insert(prov.argv.end(), args.begin(), args.end());
  return prov;
}

void print_verb_settings(const std::string& verb, const io::Options& opts, const std::string& what) {
  std::cerr << "gaugelab " << verb << ": " << (what.empty() ? "" : what + "; ") << "settings " << opts.to_json().dump()
            << "\n";
}

}  // namespace gaugelab::cli
