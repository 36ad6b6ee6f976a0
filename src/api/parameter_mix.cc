#include "api/parameter_mix.h"

#include <string>

namespace fdyno::api {
namespace {

std::string Join(const std::vector<std::string_view>& names, std::string_view separator) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) s += separator;
    s += names[i];
  }
  return s;
}

}  // namespace

ParameterMix& ParameterMix::Legacy(std::string_view name, bool present) {
  if (present) legacy_.push_back(name);
  return *this;
}

ParameterMix& ParameterMix::Expression(std::string_view name, bool present) {
  (present ? expressions_ : absent_).push_back(name);
  return *this;
}

Error ParameterMix::MixedError() const {
  return Error::Validation(
      "Can not use both expression and non-expression parameters in the same request: "
      "Non-expression parameters: {" +
      Join(legacy_, ", ") + "} Expression parameters: {" + Join(expressions_, ", ") + "}");
}

Status ParameterMix::CheckAttributeMaps(bool has_names, bool has_values) const {
  if (!expressions_.empty() || (!has_names && !has_values)) return Status::Ok();
  const std::string absent =
      Join(absent_, " and ") + (absent_.size() == 1 ? " is null" : " are null");
  return Error::Validation(
      std::string(has_names ? "ExpressionAttributeNames" : "ExpressionAttributeValues") +
      " can only be specified when using expressions: " + absent);
}

Status ParameterMix::Check(bool has_names, bool has_values) const {
  if (mixed()) return MixedError();
  return CheckAttributeMaps(has_names, has_values);
}

}  // namespace fdyno::api
