// SearchVectors: the TopK items of a vector index most similar to a search vector
// (store/vector_search.h), exact, as of one snapshot of the table.
//
// Order of checks: the request alone (api/vector_search_request.h), then, in the read
// transaction, the table, the index (a vector index, ACTIVE and not backfilling), the search
// vector against its Dimensions and the condition against its search schema (the HASH attribute
// required when it has one). Messages: DynamoDB's where its documentation gives them,
// docs/compatibility.md for the rest.
//
// Response: SearchResults [{Item, Score}] most similar first; Item holds the attributes the
// index projects (narrowed by ProjectionExpression). ConsumedCapacity (TOTAL or INDEXES) is
// {"VectorSearchRequestBytes": n}: the bytes of the vectors scored plus those of the items
// returned.
//
// Thread-safety: the handler is thread-safe (state is per request).
#pragma once

#include "api/operation.h"
#include "api/services.h"

namespace fdyno::api {

// Registers SearchVectors.
void RegisterVectorOperations(OperationRegistry& registry, const Services& services);

}  // namespace fdyno::api
