// The browser console's static files (index.html, its script, its style), embedded in the
// binary at build time from src/console/web/ by cmake/embed_files.cmake, and served by the
// router under /console/ (http/router.h says on which listener).
//
// Thread-safety: immutable data; every function may run on any thread.
#pragma once

#include <span>
#include <string_view>

namespace fdyno::console {

struct EmbeddedFile {
  std::string_view name;  // relative to /console/: "index.html", "console.js", ...
  std::string_view body;
};

// Every embedded file (generated code).
std::span<const EmbeddedFile> EmbeddedFiles();

// The file a GET of /console/<name> answers with ("" and "index.html" are the page); null when
// there is none.
const EmbeddedFile* FindFile(std::string_view name);

// The Content-Type of a file by its extension (.html, .js, .css, .svg; text/plain otherwise).
std::string_view ContentTypeOf(std::string_view name);

}  // namespace fdyno::console
