#include "main/dynamodb_local.h"

#include <algorithm>
#include <cctype>
#include <optional>

namespace fdyno::main {
namespace {

constexpr std::string_view kOptions[] = {"-jar",
                                         "-inMemory",
                                         "-dbPath",
                                         "-port",
                                         "-cors",
                                         "-sharedDb",
                                         "-disableTelemetry",
                                         "-optimizeDbBeforeStartup",
                                         "-help",
                                         "-delayTransientStatuses"};

Error Bad(const std::string& message) {
  return Error::Validation("DynamoDB Local options: " + message);
}

bool IsJavaOption(std::string_view a) {
  return a.size() > 2 && a[0] == '-' && (a[1] == 'D' || a[1] == 'X');
}

}  // namespace

bool IsDynamoDbLocalCommand(const std::vector<std::string>& args) {
  if (args.empty()) return false;
  const std::string& first = args.front();
  return IsJavaOption(first) ||
         std::find(std::begin(kOptions), std::end(kOptions), first) != std::end(kOptions);
}

Result<LocalCommand> FromDynamoDbLocal(const std::vector<std::string>& args) {
  LocalCommand out;
  bool in_memory = false, shared = false, optimize = false, delay = false;
  std::optional<std::string> db_path;
  std::string port = "8000", cors = "*";
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> Result<std::string> {
      if (i + 1 >= args.size()) return Bad(a + " needs a value");
      return args[++i];
    };
    if (IsJavaOption(a) || a == "-disableTelemetry") continue;
    if (a == "-jar") {
      FDYNO_ASSIGN_OR_RETURN(std::string jar, value());
      (void)jar;  // the launcher's: DynamoDBLocal.jar
    } else if (a == "-inMemory") {
      in_memory = true;
    } else if (a == "-sharedDb") {
      shared = true;
    } else if (a == "-optimizeDbBeforeStartup") {
      optimize = true;
    } else if (a == "-dbPath") {
      FDYNO_ASSIGN_OR_RETURN(db_path, value());
    } else if (a == "-port") {
      FDYNO_ASSIGN_OR_RETURN(port, value());
      if (port.empty() || !std::all_of(port.begin(), port.end(), ::isdigit) || port.size() > 5 ||
          std::stoi(port) < 1 || std::stoi(port) > 65535) {
        return Bad("-port must be a port number, not " + port);
      }
    } else if (a == "-cors") {
      FDYNO_ASSIGN_OR_RETURN(cors, value());
    } else if (a == "-help") {
      out.help = true;
    } else if (a == "-delayTransientStatuses") {
      delay = true;
    } else {
      return Bad("unknown option " + a + " (fdyno -help lists them)");
    }
  }
  if (in_memory && db_path) return Bad("You cannot specify both -dbPath and -inMemory");
  if (optimize && !db_path) return Bad("-optimizeDbBeforeStartup needs -dbPath");
  out.serve_args = {"--listen", "0.0.0.0:" + port, "--allow-anonymous", "--cors", cors};
  if (in_memory) out.serve_args.push_back("--in-memory");
  if (db_path) out.serve_args.insert(out.serve_args.end(), {"--data-dir", *db_path});
  // -sharedDb: one database for every key and region, so every request acts in one region.
  out.serve_args.push_back(shared ? "--one-region" : "--database-per-key");
  if (delay) {
    out.serve_args.insert(out.serve_args.end(),
                          {"--index-status-delay", std::to_string(kTransientStatusDelaySeconds)});
  }
  return out;
}

std::string DynamoDbLocalHelp() {
  return R"(fdyno, started with DynamoDB Local's options (java -jar DynamoDBLocal.jar ...):

 -cors <arg>                 CORS origins, comma-separated, or '*' for any (default '*')
 -dbPath <value>             directory of the database (fdyno's files: --data-dir)
 -delayTransientStatuses     an index UpdateTable adds or deletes stays CREATING or DELETING
                             for 5 s before its backfill or removal begins
                             (--index-status-delay 5)
 -disableTelemetry           accepted: fdyno sends no telemetry
 -help                       this text
 -inMemory                   keep everything in memory (--in-memory)
 -optimizeDbBeforeStartup    accepted with -dbPath: fdyno's engine compacts in the background
 -port <value>               port on every interface (default 8000)
 -sharedDb                   one database for every access key and region; without it, one
                             per access key and region (--database-per-key)

-jar DynamoDBLocal.jar and the Java launcher's -D and -X options are ignored. Like DynamoDB
Local, fdyno then listens on every interface and accepts any signature (--allow-anonymous).
`fdyno serve --help` lists fdyno's own flags.
)";
}

}  // namespace fdyno::main
