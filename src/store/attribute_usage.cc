#include "store/attribute_usage.h"

#include <algorithm>
#include <string>
#include <vector>

namespace fdyno::store {

void DropUnusedAttributeDefinitions(TableInfo& t) {
  auto used = [&](const std::string& name) {
    auto in = [&](const KeySchema& k) {
      const std::vector<model::KeyAttribute> attributes = k.Attributes();
      return std::any_of(attributes.begin(), attributes.end(),
                         [&](const model::KeyAttribute& a) { return a.name == name; });
    };
    if (in(t.key_schema)) return true;
    for (const auto* list : {&t.local_indexes, &t.global_indexes}) {
      for (const SecondaryIndex& i : *list) {
        if (in(i.key_schema)) return true;
      }
    }
    for (const VectorIndex& v : t.vector_indexes) {
      for (const SearchSchemaElement& e : v.search_schema) {
        if (e.attribute.name == name) return true;
      }
    }
    return false;
  };
  std::erase_if(t.attribute_definitions,
                [&](const AttributeDefinition& a) { return !used(a.name); });
}

}  // namespace fdyno::store
