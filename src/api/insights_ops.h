// CloudWatch Contributor Insights: UpdateContributorInsights, DescribeContributorInsights,
// ListContributorInsights, on a table or one of its global secondary indexes.
//
// The setting lives in the table's catalog record (store::InsightsSettings). ENABLE answers
// ENABLING and DISABLE DISABLING, as DynamoDB does; fdyno starts or stops counting with the
// commit, so DescribeContributorInsights already says ENABLED or DISABLED. DynamoDB's rules:
// ENABLE on an enabled resource in the same mode, and DISABLE on a disabled one, change nothing
// and answer the settled status; ENABLE without a mode means ACCESSED_AND_THROTTLED_KEYS; a mode
// change keeps the rules' creation time; an account has at most kInsightsRuleQuota rules (2 per
// resource without a sort key, 4 with one, half in THROTTLED_KEYS mode), and an ENABLE past the
// quota is accepted and then FAILED with FailureException LimitExceededException, until a
// DISABLE or an ENABLE that fits. ListContributorInsights lists every resource whose status is
// not DISABLED. What is counted, and where it is shown: api/key_insights.h.
//
// Thread-safety: the handlers are thread-safe.
#pragma once

#include "api/operation.h"
#include "api/services.h"

namespace fdyno::api {

// CloudWatch's quota of Contributor Insights rules per account and region.
inline constexpr int kInsightsRuleQuota = 100;

void RegisterInsightsOperations(OperationRegistry& registry, const Services& services);

}  // namespace fdyno::api
