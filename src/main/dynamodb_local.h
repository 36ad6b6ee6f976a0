// DynamoDB Local's command line, as `java -jar DynamoDBLocal.jar ...`, the amazon/dynamodb-local
// image and compose files start it, read as `fdyno serve` flags, so that fdyno runs in their
// place unchanged:
//
//   -jar DynamoDBLocal.jar, -D<property>, -X<option>  ignored (the Java launcher's)
//   -inMemory              --in-memory
//   -dbPath DIR            --data-dir DIR (fdyno's own files, not DynamoDB Local's .db file)
//   -port N                --listen 0.0.0.0:N (default 8000); DynamoDB Local listens on every
//                          interface and accepts any signature: --allow-anonymous
//   -cors ORIGINS          --cors ORIGINS (default "*", as DynamoDB Local)
//   -sharedDb              one database for every access key and region; without it
//                          --database-per-key, as DynamoDB Local keeps one per key and region
//   -optimizeDbBeforeStartup  accepted with -dbPath (as DynamoDB Local requires): fdyno's engine
//                          compacts in the background, so there is nothing to run at start
//   -disableTelemetry      accepted: fdyno sends no telemetry
//   -delayTransientStatuses  --index-status-delay 5: as DynamoDB Local's (which, its help says,
//                          holds only online index CREATING and DELETING), an index UpdateTable
//                          adds or deletes keeps that status 5 s (fdyno's choice of delay)
//                          before its backfill or removal begins
//   -help                  DynamoDB Local's options and what they become
#pragma once

#include <string>
#include <vector>

#include "base/result.h"

namespace fdyno::main {

// Whether the arguments (without the program name) are DynamoDB Local's: the first one is one
// of its options, -jar, or a Java -D/-X option.
bool IsDynamoDbLocalCommand(const std::vector<std::string>& args);

struct LocalCommand {
  std::vector<std::string> serve_args;  // for `fdyno serve`
  bool help = false;
};

// The serve flags DynamoDB Local's `args` mean; a ValidationException naming a bad argument.
Result<LocalCommand> FromDynamoDbLocal(const std::vector<std::string>& args);

// How long -delayTransientStatuses holds an index's CREATING or DELETING.
inline constexpr int kTransientStatusDelaySeconds = 5;

// -help's text.
std::string DynamoDbLocalHelp();

}  // namespace fdyno::main
