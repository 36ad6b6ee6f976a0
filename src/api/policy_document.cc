#include "api/policy_document.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <regex>

namespace fdyno::api {
namespace {

using rapidjson::Value;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

constexpr std::string_view kInvalid = "One or more parameter values were invalid: ";
constexpr std::array<std::string_view, 4> kStreamActions = {"GetRecords", "GetShardIterator",
                                                            "DescribeStream", "ListStreams"};

Error InvalidDocument(std::string_view detail) {
  return Error::Validation(std::string(kInvalid) +
                           "Invalid policy document: " + std::string(detail));
}

Error InvalidPrincipal() {
  return Error::Validation(std::string(kInvalid) + "Invalid principal in policy document.");
}

std::string_view View(const Value& v) { return {v.GetString(), v.GetStringLength()}; }

void Str(Writer& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

// A string or a list of strings, as policies write Action, Resource and condition values.
Result<std::vector<std::string>> Strings(const Value& v, std::string_view field) {
  std::vector<std::string> out;
  if (v.IsString()) {
    out.emplace_back(View(v));
    return out;
  }
  if (!v.IsArray() || v.Empty()) {
    return InvalidDocument("Invalid value for " + std::string(field));
  }
  for (const Value& e : v.GetArray()) {
    if (!e.IsString()) return InvalidDocument("Invalid value for " + std::string(field));
    out.emplace_back(View(e));
  }
  return out;
}

// A one-element list as a string, a longer one as written.
void WriteStrings(Writer& w, const std::vector<std::string>& values) {
  if (values.size() == 1) return Str(w, values[0]);
  w.StartArray();
  for (const std::string& v : values) Str(w, v);
  w.EndArray();
}

// An AWS principal in canonical form (an account id as its root ARN), or nullopt when it is
// none fdyno knows how to name.
std::optional<std::string> CanonicalPrincipal(std::string_view p) {
  static const std::regex account("[0-9]{12}");
  static const std::regex iam("arn:aws:iam::[0-9]{12}:(root|user/.+|role/.+)");
  static const std::regex sts("arn:aws:sts::[0-9]{12}:assumed-role/.+");
  const std::string s(p);
  if (s == "*") return s;
  if (std::regex_match(s, account)) return "arn:aws:iam::" + s + ":root";
  if (std::regex_match(s, iam) || std::regex_match(s, sts)) return s;
  return std::nullopt;
}

// The position DynamoDB's policy parser names for a syntax error at byte `offset`:
// "(line,column)", both from 1.
std::string Position(std::string_view text, size_t offset) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "(" + std::to_string(line) + "," + std::to_string(column) + ")";
}

Status ReadPrincipal(const Value& v, std::string_view text, PolicyStatement& st, Writer& w) {
  if (v.IsString() && View(v) == "*") {
    st.any_principal = true;
    Str(w, "*");
    return Status::Ok();
  }
  if (v.IsString()) {
    // A bare account id (without {"AWS": ...}) is a syntax error where the value starts.
    const size_t at = text.find("\"" + std::string(View(v)) + "\"");
    return InvalidDocument("Syntax error at position " + Position(text, at));
  }
  if (!v.IsObject() || v.MemberCount() != 1 || !v.HasMember("AWS")) return InvalidPrincipal();
  FDYNO_ASSIGN_OR_RETURN(std::vector<std::string> given, Strings(v["AWS"], "Principal"));
  for (const std::string& p : given) {
    std::optional<std::string> canonical = CanonicalPrincipal(p);
    if (!canonical) return InvalidPrincipal();
    if (*canonical == "*") st.any_principal = true;
    if (std::find(st.principals.begin(), st.principals.end(), *canonical) == st.principals.end()) {
      st.principals.push_back(*canonical);
    }
  }
  w.StartObject();
  w.Key("AWS");
  WriteStrings(w, st.principals);
  w.EndObject();
  return Status::Ok();
}

bool IsStreamAction(std::string_view action) {
  constexpr std::string_view kPrefix = "dynamodb:";
  if (action.size() <= kPrefix.size()) return false;
  std::string name(action.substr(kPrefix.size()));
  for (std::string_view s : kStreamActions) {
    if (name.size() == s.size() &&
        std::equal(name.begin(), name.end(), s.begin(),
                   [](char a, char b) { return std::tolower(a) == std::tolower(b); })) {
      return true;
    }
  }
  return false;
}

// A table's policy may not name stream actions, a stream's policy only those (wildcards may
// name both).
Status CheckActions(const std::vector<std::string>& actions, PolicyTarget target) {
  std::string invalid;
  for (const std::string& a : actions) {
    if (a.find_first_of("*?") != std::string::npos) continue;
    if (IsStreamAction(a) != (target == PolicyTarget::kStream)) {
      invalid += (invalid.empty() ? "\"" : ", \"") + a + "\"";
    }
  }
  if (invalid.empty()) return Status::Ok();
  return InvalidDocument("The following action names are invalid: " + invalid);
}

Status ReadConditions(const Value& v, PolicyStatement& st, Writer& w) {
  if (!v.IsObject()) return InvalidDocument("Invalid value for Condition");
  w.StartObject();
  for (const auto& op : v.GetObject()) {
    if (!op.value.IsObject()) return InvalidDocument("Invalid value for Condition");
    w.Key(op.name.GetString(), op.name.GetStringLength());
    w.StartObject();
    for (const auto& key : op.value.GetObject()) {
      FDYNO_ASSIGN_OR_RETURN(std::vector<std::string> values, Strings(key.value, "Condition"));
      w.Key(key.name.GetString(), key.name.GetStringLength());
      WriteStrings(w, values);
      st.conditions.push_back(
          {std::string(View(op.name)), std::string(View(key.name)), std::move(values)});
    }
    w.EndObject();
  }
  w.EndObject();
  return Status::Ok();
}

// One of `a` (preferred) or `b`: which was given, and its value; null when neither.
const Value* OneOf(const Value& st, const char* a, const char* b, bool* second) {
  *second = !st.HasMember(a) && st.HasMember(b);
  if (st.HasMember(a)) return &st[a];
  if (st.HasMember(b)) return &st[b];
  return nullptr;
}

Result<PolicyStatement> ReadStatement(const Value& v, std::string_view text, PolicyTarget target,
                                      Writer& w) {
  if (!v.IsObject()) return InvalidDocument("This policy contains invalid Json");
  PolicyStatement st;
  w.StartObject();
  if (v.HasMember("Sid")) {
    if (!v["Sid"].IsString()) return InvalidDocument("Invalid value for Sid");
    st.sid = std::string(View(v["Sid"]));
    w.Key("Sid");
    Str(w, st.sid);
  }
  std::string effect =
      v.HasMember("Effect") && v["Effect"].IsString() ? std::string(View(v["Effect"])) : "";
  std::transform(effect.begin(), effect.end(), effect.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (effect != "allow" && effect != "deny") {
    return InvalidDocument(v.HasMember("Effect") ? "Invalid effect"
                                                 : "Missing required field Effect");
  }
  st.allow = effect == "allow";
  w.Key("Effect");
  Str(w, st.allow ? "Allow" : "Deny");
  if (!v.HasMember("Principal")) return InvalidDocument("Missing required field Principal");
  w.Key("Principal");
  FDYNO_RETURN_IF_ERROR(ReadPrincipal(v["Principal"], text, st, w));
  const Value* actions = OneOf(v, "Action", "NotAction", &st.not_action);
  if (actions == nullptr) return InvalidDocument("Missing required field Action");
  FDYNO_ASSIGN_OR_RETURN(st.actions, Strings(*actions, st.not_action ? "NotAction" : "Action"));
  FDYNO_RETURN_IF_ERROR(CheckActions(st.actions, target));
  w.Key(st.not_action ? "NotAction" : "Action");
  WriteStrings(w, st.actions);
  const Value* resources = OneOf(v, "Resource", "NotResource", &st.not_resource);
  if (resources == nullptr) return InvalidDocument("Missing required field Resource");
  FDYNO_ASSIGN_OR_RETURN(st.resources,
                         Strings(*resources, st.not_resource ? "NotResource" : "Resource"));
  w.Key(st.not_resource ? "NotResource" : "Resource");
  WriteStrings(w, st.resources);
  if (v.HasMember("Condition")) {
    w.Key("Condition");
    FDYNO_RETURN_IF_ERROR(ReadConditions(v["Condition"], st, w));
  }
  w.EndObject();
  return st;
}

// ---- evaluation ------------------------------------------------------------------------------

enum class Outcome { kMatch, kNoMatch, kUnknown };

bool StringMatch(std::string_view base, const std::string& policy, const std::string& value) {
  if (base == "StringEquals") return policy == value;
  if (base == "StringEqualsIgnoreCase") {
    return policy.size() == value.size() &&
           std::equal(policy.begin(), policy.end(), value.begin(), [](char a, char b) {
             return std::tolower(static_cast<unsigned char>(a)) ==
                    std::tolower(static_cast<unsigned char>(b));
           });
  }
  if (base == "StringLike") return WildcardMatch(policy, value);
  return false;
}

Outcome EvaluateCondition(const PolicyCondition& c, const AccessRequest& r) {
  std::string_view op = c.op;
  enum class Set { kNone, kAll, kAny } set = Set::kNone;
  if (op.starts_with("ForAllValues:")) {
    set = Set::kAll;
    op.remove_prefix(13);
  } else if (op.starts_with("ForAnyValue:")) {
    set = Set::kAny;
    op.remove_prefix(12);
  }
  const bool if_exists = op.ends_with("IfExists");
  if (if_exists) op.remove_suffix(8);
  if (r.unknown_keys.contains(c.key)) return Outcome::kUnknown;
  auto found = r.keys.find(c.key);
  const std::vector<std::string>* values = found == r.keys.end() ? nullptr : &found->second;
  if (op == "Null") {
    const bool absent = values == nullptr || values->empty();
    return (c.values.size() == 1 && (c.values[0] == "true") == absent) ? Outcome::kMatch
                                                                       : Outcome::kNoMatch;
  }
  bool negated = false;
  std::string base(op);
  if (base == "StringNotEquals" || base == "StringNotEqualsIgnoreCase" || base == "StringNotLike") {
    negated = true;
    base.erase(6, 3);  // "StringNot..." -> "String..."
  }
  if (base != "StringEquals" && base != "StringEqualsIgnoreCase" && base != "StringLike") {
    return Outcome::kUnknown;
  }
  if (values == nullptr || values->empty()) {
    if (set == Set::kAll) return Outcome::kMatch;  // IAM: vacuously true
    return if_exists ? Outcome::kMatch : Outcome::kNoMatch;
  }
  auto matches = [&](const std::string& value) {
    bool any = std::any_of(c.values.begin(), c.values.end(),
                           [&](const std::string& p) { return StringMatch(base, p, value); });
    return negated ? !any : any;
  };
  const bool result = set == Set::kAll ? std::all_of(values->begin(), values->end(), matches)
                                       : std::any_of(values->begin(), values->end(), matches);
  return result ? Outcome::kMatch : Outcome::kNoMatch;
}

bool Matches(const std::vector<std::string>& patterns, const std::string& value, bool ignore_case) {
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](const std::string& p) { return WildcardMatch(p, value, ignore_case); });
}

bool PrincipalMatches(const PolicyStatement& st, const AccessRequest& r) {
  if (st.any_principal) return true;
  const std::string root = "arn:aws:iam::" + r.account + ":root";
  return std::any_of(st.principals.begin(), st.principals.end(),
                     [&](const std::string& p) { return p == r.principal || p == root; });
}

}  // namespace

bool WildcardMatch(std::string_view pattern, std::string_view text, bool ignore_case) {
  auto eq = [&](char a, char b) {
    return ignore_case ? std::tolower(static_cast<unsigned char>(a)) ==
                             std::tolower(static_cast<unsigned char>(b))
                       : a == b;
  };
  size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || eq(pattern[p], text[t]))) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

Result<PolicyDocument> ParsePolicy(std::string_view text, PolicyTarget target) {
  if (text.size() > kMaxPolicyBytes) {
    return Error::Validation(std::string(kInvalid) + "Maximum policy size of " +
                             std::to_string(kMaxPolicyBytes) + " bytes exceeded");
  }
  rapidjson::Document d;
  d.Parse(text.data(), text.size());
  // A JSON array is not JSON to DynamoDB's policy parser; the other non-objects ("null", a
  // string, a number) are not a policy (recorded in 2026).
  if (d.HasParseError() || d.IsArray()) {
    return InvalidDocument("This policy contains invalid Json");
  }
  if (!d.IsObject()) return InvalidDocument("This text appears not to be a policy");
  // An empty object is a syntax error where it ends, as DynamoDB's parser reports it.
  if (d.MemberCount() == 0) {
    return InvalidDocument("Syntax error at position " + Position(text, text.size()));
  }
  PolicyDocument doc;
  doc.version_given = d.HasMember("Version");
  doc.version = "2008-10-17";
  if (doc.version_given) {
    if (!d["Version"].IsString() ||
        (View(d["Version"]) != "2012-10-17" && View(d["Version"]) != "2008-10-17")) {
      return InvalidDocument("The policy must contain a valid version string");
    }
    doc.version = std::string(View(d["Version"]));
  }
  const Value* statements = d.HasMember("Statement") ? &d["Statement"] : nullptr;
  if (statements == nullptr || (statements->IsArray() && statements->Empty())) {
    return InvalidDocument("Could not parse the policy: Statement is empty!");
  }
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  w.Key("Version");
  Str(w, doc.version);
  w.Key("Statement");
  w.StartArray();
  auto read = [&](const Value& v) -> Status {
    FDYNO_ASSIGN_OR_RETURN(PolicyStatement st, ReadStatement(v, text, target, w));
    doc.statements.push_back(std::move(st));
    return Status::Ok();
  };
  if (statements->IsArray()) {
    for (const Value& v : statements->GetArray()) FDYNO_RETURN_IF_ERROR(read(v));
  } else {
    FDYNO_RETURN_IF_ERROR(read(*statements));
  }
  w.EndArray();
  w.EndObject();
  std::set<std::string> sids;
  for (const PolicyStatement& st : doc.statements) {
    if (!st.sid.empty() && !sids.insert(st.sid).second) {
      return InvalidDocument("The Statement Ids in the policy are not unique");
    }
  }
  for (const PolicyStatement& st : doc.statements) {
    if (st.allow && st.any_principal && st.conditions.empty()) {
      return Error::Validation(
          "Resource-based policy grants unbounded access in one or more elements. Please revise "
          "the policy to ensure least-privilege form of access");
    }
  }
  doc.canonical.assign(buf.GetString(), buf.GetSize());
  return doc;
}

Decision Evaluate(const PolicyDocument& policy, const AccessRequest& r) {
  bool allowed = false;
  for (const PolicyStatement& st : policy.statements) {
    if (!PrincipalMatches(st, r)) continue;
    if (Matches(st.actions, r.action, true) == st.not_action) continue;
    if (Matches(st.resources, r.resource, false) == st.not_resource) continue;
    bool applies = true;
    for (const PolicyCondition& c : st.conditions) {
      const Outcome o = EvaluateCondition(c, r);
      // Undecidable: fail closed (a Deny applies, an Allow does not).
      if (o == Outcome::kNoMatch || (o == Outcome::kUnknown && st.allow)) {
        applies = false;
        break;
      }
    }
    if (!applies) continue;
    if (!st.allow) return Decision::kDeny;
    allowed = true;
  }
  return allowed ? Decision::kAllow : Decision::kNone;
}

}  // namespace fdyno::api
