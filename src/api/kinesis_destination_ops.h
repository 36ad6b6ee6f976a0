// Kinesis Data Streams destinations of a table's changes: EnableKinesisStreamingDestination,
// DisableKinesisStreamingDestination, UpdateKinesisStreamingDestination,
// DescribeKinesisStreamingDestination, with DynamoDB's state machine and messages.
//
// A destination is kept in the table's catalog record (store::KinesisDestination), the latest
// first. DynamoDB accepts an Enable for any stream ARN (ENABLING) and checks the stream after:
// a stream it cannot deliver to leaves the destination ENABLE_FAILED with a
// DestinationStatusDescription saying why. fdyno serves no Kinesis stream (yet), so every
// destination ends ENABLE_FAILED with DynamoDB's description for that ARN (another region, not
// an active stream of the account, or a stream that does not exist). Enabling the same stream
// again flips its entry; at most one entry may be in flight or ACTIVE; Disable and Update need
// an ACTIVE destination, with DynamoDB's messages otherwise.
//
// Thread-safety: the handlers are thread-safe.
#pragma once

#include "api/operation.h"
#include "api/services.h"

namespace fdyno::api {

void RegisterKinesisDestinationOperations(OperationRegistry& registry, const Services& services);

}  // namespace fdyno::api
