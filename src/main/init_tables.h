// --init DIR: tables created and loaded before the server accepts requests.
//
// DIR/<Table>.json is the table's CreateTable request as the AWS CLI takes it
// (--cli-input-json); DIR/<Table>.items.json holds its items, one a line, each {"Item": {...}}
// (as DynamoDB's exports write them) or the bare item in DynamoDB JSON; or DIR/<Table>.csv holds
// them as ImportTable reads CSV (a header row, then one row an item; key attributes typed by the
// AttributeDefinitions, other cells strings). Other files are ignored.
//
// Every file is read and every line checked before anything is created. A table is created
// tagged fdyno:init=loading, loaded through BatchWriteItem, then tagged fdyno:init=complete.
// On a later start an existing table with the same definition is left alone; one still tagged
// loading (a start that stopped half way) is dropped and loaded again; one with another
// definition is an error naming the difference. An item DynamoDB refuses drops the table it was
// loading: nothing is left half loaded. Errors name the file and line.
#pragma once

#include <string>

#include "api/operation.h"
#include "base/result.h"

namespace fdyno::main {

struct InitOptions {
  std::string dir;
  std::string account;  // the tables' owner
  std::string region;
  Clock* clock = Clock::Real();
};

// Creates and loads the tables of options.dir through `registry`'s operations. A
// ValidationException for bad input (a file, a line, a conflicting table), else the engine's
// error.
Status InitTables(const api::OperationRegistry& registry, const InitOptions& options);

}  // namespace fdyno::main
