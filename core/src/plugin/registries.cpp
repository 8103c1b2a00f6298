// Registries: one registry per row of the kind table, and the candidate
// libraries they open on demand (Registries::open_next_candidate lives with
// the loader, in library_loader.cpp).
#include <blis/registry.hpp>

#include <algorithm>

namespace blis {

Registries::Registries() {
  for (const PluginKindRow& row : plugin_kinds()) row.registry(*this).owner_ = this;
}

Registries::~Registries() = default;

RegistryBase& Registries::of(PluginKind kind) { return kind_row(kind).registry(*this); }

const RegistryBase& Registries::of(PluginKind kind) const {
  return kind_row(kind).registry(const_cast<Registries&>(*this));
}

void Registries::add_candidates(const std::vector<std::string>& paths) {
  // pending_ is reversed; new candidates go after every pending one.
  pending_.insert(pending_.begin(), paths.rbegin(), paths.rend());
}

void Registries::open_all_candidates() {
  while (open_next_candidate(false)) {
  }
}

}  // namespace blis
