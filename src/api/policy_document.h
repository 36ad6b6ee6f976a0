// Resource-based policy documents (PutResourcePolicy): DynamoDB's validation, its canonical form
// (what GetResourcePolicy returns), and IAM's evaluation of a request against a policy.
//
// Validation, in this order, with DynamoDB's ValidationException texts: the size (20480 bytes,
// whitespace counted), JSON, Version (2012-10-17 or 2008-10-17), a Statement list that is not
// empty (an object is a one-statement list), each statement's Effect (case-insensitive), Action
// or NotAction, Resource or NotResource, Principal ("*" or {"AWS": account ids or IAM/STS ARNs}),
// then unique Sids, then DynamoDB's guardrail: an Allow to every principal without a condition.
// A table's policy may not name the stream actions (GetRecords, GetShardIterator,
// DescribeStream, ListStreams), a stream's policy only those.
//
// The canonical form is DynamoDB's: minified JSON, keys in the order Version, Statement / Sid,
// Effect, Principal, Action (or NotAction), Resource (or NotResource), Condition; one-element
// lists as a string; an account id principal as its root ARN, duplicate principals once; a
// missing Version as 2008-10-17.
//
// Evaluation (Evaluate): a statement applies when its principal, action (case-insensitive,
// wildcards * and ?), resource (wildcards) and every condition match; an applying Deny decides,
// else an applying Allow allows. Conditions: StringEquals, StringNotEquals,
// StringEqualsIgnoreCase, StringNotEqualsIgnoreCase, StringLike, StringNotLike and Null, with the
// ForAllValues:/ForAnyValue: qualifiers and the IfExists suffix, over the keys the request
// carries (AccessRequest::keys). A condition fdyno cannot decide (another operator, or a key the
// request's values are unknown for) fails closed: it never lets an Allow apply, always a Deny.
//
// Thread-safety: pure functions; a PolicyDocument is immutable once parsed.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace fdyno::api {

inline constexpr size_t kMaxPolicyBytes = 20480;

struct PolicyCondition {
  std::string op;   // as written: "ForAllValues:StringEquals", "StringLikeIfExists", ...
  std::string key;  // as written: "dynamodb:LeadingKeys"
  std::vector<std::string> values;
};

struct PolicyStatement {
  std::string sid;
  bool allow = true;
  bool any_principal = false;           // "*" or {"AWS": "*"}
  std::vector<std::string> principals;  // canonical ARNs
  bool not_action = false;
  std::vector<std::string> actions;
  bool not_resource = false;
  std::vector<std::string> resources;
  std::vector<PolicyCondition> conditions;
};

struct PolicyDocument {
  std::string version;
  bool version_given = true;
  std::vector<PolicyStatement> statements;
  std::string canonical;  // what GetResourcePolicy returns
};

enum class PolicyTarget { kTable, kStream };

// The document `text` validated and in canonical form, or DynamoDB's ValidationException.
Result<PolicyDocument> ParsePolicy(std::string_view text, PolicyTarget target);

// One request as a policy sees it.
struct AccessRequest {
  std::string account;                                   // the caller's account
  std::string principal;                                 // the caller: arn:aws:iam::<account>:root
  std::string action;                                    // "dynamodb:GetItem"
  std::string resource;                                  // the ARN it addresses
  std::map<std::string, std::vector<std::string>> keys;  // condition keys and their values
  std::set<std::string> unknown_keys;  // keys whose values fdyno cannot tell for this request
};

enum class Decision { kNone, kAllow, kDeny };

Decision Evaluate(const PolicyDocument& policy, const AccessRequest& request);

// IAM's wildcard match: '*' any run of characters, '?' any one.
bool WildcardMatch(std::string_view pattern, std::string_view text, bool ignore_case = false);

}  // namespace fdyno::api
