// Test support for the PartiQL case files: a one-line text form of a plan and of resolved
// conditions, so a case states the plan it expects. Test-only; the format is not stable.
//
//   get key={"pk":{"S":"a"}} filter=(age > {"N":"20"}) select=*
//   query index=gsi-all partition=gpk={"S":"x"} range=(sk BETWEEN {"N":"1"} AND {"N":"2"}) desc
//   scan filter=begins_with(a, {"S":"x"}) select=a,b<-m.b
//   update key={...} set=... condition=... returning=ALL_NEW
#pragma once

#include <string>

#include "expr/ast.h"
#include "partiql/plan.h"

namespace fdyno::partiql::testing {

std::string PlanText(const Plan& plan);
std::string ConditionText(const expr::Condition& c);

}  // namespace fdyno::partiql::testing
