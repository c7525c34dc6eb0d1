// Files that are either the old version or the complete new one: every writer of a whole file goes
// through write_atomically (bytes) or replace_file (a file another library writes, e.g. an HDF5 log
// rewritten to a temporary name), and text logs grow through append_text. Errors are one line naming
// the file and the cause ("WHAT: write failed (No space left on device)").
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace gaugelab::io {

/// `size` bytes written to `path` through PATH.tmp and a rename, so `path` is either the old file or the
/// complete new one. A failed temporary file is removed. (Also how config.json files are written.)
void write_atomically(const std::string& path, const void* data, std::size_t size, const std::string& what);
/// `text` appended to `path` (created if absent) with POSIX write(2) in a loop, so a full disk reports
/// "WHAT: write failed (No space left on device)" instead of being lost in a stdio buffer.
void append_text(const std::string& path, const std::string& text, const std::string& what);
/// `write(tmp)` writes the new file at tmp = PATH + suffix; it then replaces `path` in one rename. If
/// write throws, the temporary file is removed and `path` is untouched.
void replace_file(const std::string& path, const std::string& suffix, const std::function<void(const std::string&)>& write,
                  const std::string& what);

}  // namespace gaugelab::io
