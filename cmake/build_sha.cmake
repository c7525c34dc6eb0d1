# Writes OUT, the one source file that holds the commit the binaries are built from: `git rev-parse --short=12 HEAD`
# of SRC, with "-dirty" when a build input differs from it (a changed or new file under the source folders),
# "unknown" outside a git checkout. Run at every build
# (CMakeLists.txt: target gaugelab_build_sha), so that a log's /git_sha names the commit its binary was built from,
# not the one the build directory was configured at; the file is rewritten only when the text changes, so an
# unchanged commit recompiles nothing.
#   cmake -DSRC=<source dir> -DOUT=<file> -P cmake/build_sha.cmake
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE sha OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc ERROR_QUIET)
if(NOT rc EQUAL 0 OR NOT sha)
  set(sha "unknown")
else()
  # Only the build's inputs count (a grid's ledger or a fuzz campaign's, rewritten as they run, are not), new files
  # among them too: the libraries glob their sources.
  execute_process(COMMAND git status --porcelain --untracked-files=normal --
                          src gpt2 cli toys data tests bench python fuzz cmake CMakeLists.txt
                  WORKING_DIRECTORY ${SRC} OUTPUT_VARIABLE changed OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(changed)
    string(APPEND sha "-dirty")
  endif()
endif()
set(text "// Generated at build time by cmake/build_sha.cmake: do not edit.\n#include \"io/build_info.hpp\"\nnamespace gaugelab::io {\nconst char* git_sha() { return \"${sha}\"; }\n}  // namespace gaugelab::io\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE ${OUT} "${text}")
endif()
