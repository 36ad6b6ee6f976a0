// The DynamoDB Streams API (X-Amz-Target DynamoDBStreams_20120810.*): ListStreams,
// DescribeStream, GetShardIterator and GetRecords, over the streams the mutation path records
// (store/streams.h, docs/format/streams.md).
//
// Stream ARNs are the table's ARN for the caller plus "/stream/<label>". Shard iterators carry
// the stream ARN, then "|1|" and a base64 token (account, stream, shard, position, issue time);
// they expire after 15 minutes (ExpiredIteratorException). Reading before a shard's trim point
// (records older than 24 hours are trimmed) is TrimmedDataAccessException. A closed shard read
// to its end gives no NextShardIterator.
//
// Thread-safety: the handlers are thread-safe.
#pragma once

#include "api/operation.h"
#include "api/services.h"

namespace fdyno::api {

void RegisterStreamOperations(OperationRegistry& registry, const Services& services);

}  // namespace fdyno::api
