# CTest tests for one Catch2 executable, a test per source file (tests/CMakeLists.txt, gaugelab_test_area):
# run by CMake in script mode after the executable is linked, as Catch2's catch_discover_tests runs its own.
#
#   cmake -D TEST_EXECUTABLE=... -D TEST_PREFIX=area: -D TEST_WORKING_DIR=... -D CASE_SECONDS=300
#         -D CTEST_FILE=... -P catch_add_batches.cmake
#
# A file's cases run in one process ("area:file.cpp", Catch2's -# tag [#file]), so LibTorch's start-up is paid
# once per file and not once per case. A case tagged [alone] runs as its own test ("area:case name"), as every
# case did before: it changes process-wide state, runs ranks on 127.0.0.1, may print SKIPPED: (which makes CTest
# show its whole test skipped and would hide the other cases of a batch), or takes tens of seconds (a start-up
# saved is nothing to it, and CTest runs it beside the other tests rather than in turn with its file's cases).
# Hidden cases ([.]) are not run.
# A batch's limit is CASE_SECONDS per case (plus start-up); the in-process watchdog
# (tests/support/torch_case_listener.cpp) stops a single case at CASE_SECONDS and names it.
set(_not_batched "~[.]~[alone]")
set(script "")

function(add_command NAME)  # one CTest command, each argument quoted as a bracket argument where needed
  set(_args "")
  math(EXPR _last ${ARGC}-1)
  foreach(_n RANGE 1 ${_last})
    set(_arg "${ARGV${_n}}")
    if(_arg MATCHES "[^-./:a-zA-Z0-9_]")
      set(_args "${_args} [==[${_arg}]==]")
    else()
      set(_args "${_args} ${_arg}")
    endif()
  endforeach()
  set(script "${script}${NAME}(${_args})\n" PARENT_SCOPE)
endfunction()

function(catch_run OUT)  # the executable's standard output for the arguments given; fails on a crash
  execute_process(COMMAND "${TEST_EXECUTABLE}" ${ARGN} OUTPUT_VARIABLE _out RESULT_VARIABLE _rc
                  WORKING_DIRECTORY "${TEST_WORKING_DIR}")
  if(NOT _rc MATCHES "^[0-9]+$")  # Catch2's listings exit with their count (mod 256); a signal is a string
    message(FATAL_ERROR "${TEST_EXECUTABLE} ${ARGN}: ${_rc}\n${_out}")
  endif()
  set(${OUT} "${_out}" PARENT_SCOPE)
endfunction()

string(ASCII 30 _semicolon)  # stands for ';' in a case name while the names are a CMake list
function(catch_names OUT)  # the case names the spec given selects, as a list (see _semicolon)
  catch_run(_out --list-test-names-only ${ARGN})
  string(REPLACE ";" "${_semicolon}" _out "${_out}")
  string(REGEX MATCHALL "[^\n]+" _out "${_out}")
  set(${OUT} "${_out}" PARENT_SCOPE)
endfunction()

# The files with batched cases and their counts: "   3  [#test_model]" lines of --list-tags.
catch_run(_tags "-#" --list-tags "${_not_batched}")
# An executable that did not start (a missing library: exit 127) or is not Catch2 prints no listing, and would
# register no test and pass: its tag listing must end in Catch2's count line ("N tags", 0 included).
if(NOT _tags MATCHES "[0-9]+ tags?")
  message(FATAL_ERROR "${TEST_EXECUTABLE}: no Catch2 tag listing (was it built and does it start?)\n${_tags}")
endif()
string(REGEX MATCHALL "[0-9]+ +\\[#[A-Za-z0-9_.+-]+\\]" _files "${_tags}")
set(_batched 0)
foreach(_f ${_files})
  string(REGEX REPLACE "^([0-9]+) +\\[#(.*)\\]$" "\\1" _n "${_f}")
  string(REGEX REPLACE "^([0-9]+) +\\[#(.*)\\]$" "\\2" _stem "${_f}")
  math(EXPR _batched "${_batched} + ${_n}")
  math(EXPR _limit "${_n} * ${CASE_SECONDS} + 60")
  # -d yes: each case's name and time in the output (CTest shows it for a failure or a timeout).
  add_command(add_test "${TEST_PREFIX}${_stem}.cpp" "${TEST_EXECUTABLE}" "[#${_stem}]${_not_batched}" "-#" -d yes -w NoTests)
  # A batched case that prints SKIPPED: fails its batch: it must be tagged [alone] to be shown skipped alone.
  add_command(set_tests_properties "${TEST_PREFIX}${_stem}.cpp" PROPERTIES WORKING_DIRECTORY "${TEST_WORKING_DIR}"
              TIMEOUT ${_limit} FAIL_REGULAR_EXPRESSION "SKIPPED:")
endforeach()

# Every non-hidden case must be in exactly one test: the batches' counts against the listing of the same cases.
catch_names(_names "${_not_batched}")
list(LENGTH _names _listed)
if(NOT _listed EQUAL _batched)
  message(FATAL_ERROR "${TEST_EXECUTABLE}: ${_listed} cases to batch but ${_batched} in the file tags of --list-tags:\n${_tags}")
endif()

# The [alone] cases, a test each (named and escaped as catch_discover_tests names and escapes them; a name with a
# ';' stays whole here, where catch_discover_tests splits it into two tests that match no case).
catch_names(_alone "[alone]~[.]")
foreach(_case ${_alone})
  string(REPLACE "${_semicolon}" ";" _case "${_case}")
  set(_spec "${_case}")
  foreach(_char , [ ])
    string(REPLACE "${_char}" "\\${_char}" _spec "${_spec}")
  endforeach()
  add_command(add_test "${TEST_PREFIX}${_case}" "${TEST_EXECUTABLE}" "${_spec}" -w NoTests)
  add_command(set_tests_properties "${TEST_PREFIX}${_case}" PROPERTIES WORKING_DIRECTORY "${TEST_WORKING_DIR}"
              TIMEOUT ${CASE_SECONDS} SKIP_REGULAR_EXPRESSION "SKIPPED:")
endforeach()

file(WRITE "${CTEST_FILE}" "${script}")
