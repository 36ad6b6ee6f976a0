// What the request-decoder fuzz targets share: a request body admitted as the router admits it
// before any operation handler sees it (http/router.cc, Router::Run), the invariant that a
// decoder fails only with a client error, and the removal of a member from a decoded body.
#pragma once

#include <rapidjson/document.h>

#include <cstdlib>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/utf8.h"

namespace fdyno::fuzz {

inline void Require(bool ok) {
  if (!ok) std::abort();
}

// A decoding error is a client error: ValidationException or SerializationException.
inline void RequireClientError(const Error& e) {
  Require(e.type == ErrorType::kValidation || e.type == ErrorType::kSerialization);
}

// Parses `text` into `doc` when the router would hand it to a handler: no NUL byte, valid
// UTF-8, JSON (parsed iteratively, as the router does), an object, nested at most 100 levels
// (the router's kMaxJsonDepth). False for a body the router answers itself.
inline bool ParseBody(std::string_view text, rapidjson::Document& doc) {
  if (text.empty() || std::memchr(text.data(), '\0', text.size()) != nullptr) return false;
  if (!IsValidUtf8(text)) return false;
  doc.Parse<rapidjson::kParseIterativeFlag>(text.data(), text.size());
  if (doc.HasParseError() || !doc.IsObject()) return false;
  constexpr int kMaxJsonDepth = 100;
  std::vector<std::pair<const rapidjson::Value*, int>> stack{{&doc, 1}};
  while (!stack.empty()) {
    const rapidjson::Value* v = stack.back().first;
    const int depth = stack.back().second;
    stack.pop_back();
    if (depth > kMaxJsonDepth) return false;
    auto push = [&](const rapidjson::Value& child) {
      if (child.IsObject() || child.IsArray()) stack.emplace_back(&child, depth + 1);
    };
    if (v->IsObject()) {
      for (const auto& m : v->GetObject()) push(m.value);
    } else {
      for (const auto& e : v->GetArray()) push(e);
    }
  }
  return true;
}

// Erases every member of `obj` named `name`, keeping the others in their order (a decoder
// reads the first of duplicate members). Whether there was one.
inline bool EraseMembers(rapidjson::Value& obj, std::string_view name) {
  bool erased = false;
  for (rapidjson::SizeType i = 0; i < obj.MemberCount();) {
    auto member = obj.MemberBegin() + i;
    if (std::string_view(member->name.GetString(), member->name.GetStringLength()) == name) {
      obj.EraseMember(member);
      erased = true;
    } else {
      ++i;
    }
  }
  return erased;
}

}  // namespace fdyno::fuzz
