#include "console/files.h"

namespace fdyno::console {

const EmbeddedFile* FindFile(std::string_view name) {
  if (name.empty()) name = "index.html";
  for (const EmbeddedFile& f : EmbeddedFiles()) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::string_view ContentTypeOf(std::string_view name) {
  auto ends_with = [&](std::string_view suffix) { return name.ends_with(suffix); };
  if (ends_with(".html")) return "text/html; charset=utf-8";
  if (ends_with(".js")) return "text/javascript; charset=utf-8";
  if (ends_with(".css")) return "text/css; charset=utf-8";
  if (ends_with(".svg")) return "image/svg+xml";
  return "text/plain; charset=utf-8";
}

}  // namespace fdyno::console
