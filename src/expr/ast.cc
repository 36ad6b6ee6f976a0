#include "expr/ast.h"

namespace fdyno::expr {

std::string_view KindName(ExpressionKind kind) {
  switch (kind) {
    case ExpressionKind::kCondition:
      return "ConditionExpression";
    case ExpressionKind::kFilter:
      return "FilterExpression";
    case ExpressionKind::kKeyCondition:
      return "KeyConditionExpression";
    case ExpressionKind::kProjection:
      return "ProjectionExpression";
    case ExpressionKind::kUpdate:
      return "UpdateExpression";
    case ExpressionKind::kSearchCondition:
      return "SearchConditionExpression";
  }
  return "Expression";
}

std::string_view FunctionName(Function f) {
  switch (f) {
    case Function::kAttributeExists:
      return "attribute_exists";
    case Function::kAttributeNotExists:
      return "attribute_not_exists";
    case Function::kAttributeType:
      return "attribute_type";
    case Function::kBeginsWith:
      return "begins_with";
    case Function::kContains:
      return "contains";
    case Function::kSize:
      return "size";
    case Function::kIfNotExists:
      return "if_not_exists";
    case Function::kListAppend:
      return "list_append";
  }
  return "?";
}

std::string_view CompareOpText(CompareOp op) {
  switch (op) {
    case CompareOp::kEq:
      return "=";
    case CompareOp::kNe:
      return "<>";
    case CompareOp::kLt:
      return "<";
    case CompareOp::kLe:
      return "<=";
    case CompareOp::kGt:
      return ">";
    case CompareOp::kGe:
      return ">=";
  }
  return "?";
}

std::string PathToString(const Path& path) {
  std::string out = "[";
  for (size_t i = 0; i < path.elements.size(); ++i) {
    if (i > 0) out += ", ";
    const PathElement& e = path.elements[i];
    if (e.is_index()) {
      out += "[" + std::to_string(e.index()) + "]";
    } else {
      out += e.name();
    }
  }
  out += "]";
  return out;
}

}  // namespace fdyno::expr
