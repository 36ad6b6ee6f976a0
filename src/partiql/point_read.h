// The point read most applications send, planned once per statement text:
//
//   SELECT * | <paths> FROM "table" WHERE k1 = ? AND k2 = ?      (parameters or literals)
//
// A PointReadTemplate records the table, the projection and, for each equality, which
// parameter (or literal) it compares the attribute with. For a request whose table has exactly
// those attributes as its key, with values of the key's types, Instantiate gives the same plan
// that Bind and PlanStatement would, without binding and planning the statement again. In every
// other case it gives nothing, and the caller takes the full path, which then answers whatever
// error the statement has. Pure; thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "model/attribute_value.h"
#include "partiql/ast.h"
#include "partiql/bind.h"
#include "partiql/plan.h"

namespace fdyno::partiql {

struct PointReadTemplate {
  struct Key {
    std::string name;
    std::optional<size_t> param;  // the parameter compared with, else `literal`
    model::AttributeValue literal;
  };
  std::string table;
  std::vector<Key> keys;  // distinct names
  size_t param_count = 0;
  bool all_attributes = true;
  std::vector<OutputPath> projection;
  expr::Projection projection_paths;
};

// The template of `statement` when it has the point-read form, else nullopt.
std::optional<PointReadTemplate> PointReadTemplateOf(const ast::Statement& statement);

// The plan of the statement for these parameters on a table with key schema `ks` when it reads
// one item by its whole key; nullopt when anything differs from that (take the full path).
std::optional<ReadPlan> Instantiate(const PointReadTemplate& t, const model::KeySchema& ks,
                                    const Parameters& parameters);

}  // namespace fdyno::partiql
