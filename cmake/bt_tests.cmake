# The one way a test is added (tests/<module>/, bench/, the top-level style checks), so every test follows one
# naming scheme and carries one kind label:
#   executables  test_<module>[_<topic>]      <module>: the folder under tests/ (checked here)
#   ctest names  <module>.<Suite>.<Case>      gtest cases; command tests: <module>.<name>
#   labels       exactly one kind: unit (`ctest -L unit`, the quick loop: under 2 minutes on 2 cores), slow (the demo
#                runs, kill/resume and timeout tests, end-to-end runs of 4-12 s), gpu (needs a device, skips without
#                one); plus `threads` for the cases the ThreadSanitizer configuration runs (make test-tsan: ctest -L
#                threads). `make test-unit` (CI) runs every label. style.test_labels checks all of this.
#
# bt_add_gtest(NAME test_<module>[_<topic>] SOURCES src... [LIBS lib...] LABELS kind [threads]
#              [DEFINITIONS d...] [INCLUDES dir...] [DEPENDS target...] [PCH_FROM target]
#              [SLOW regex...] [SERIAL regex...] [ENVIRONMENT VAR=value...] [DISCOVERY_TIMEOUT s]
#              [PROPERTIES name value...])
#   One executable (everything about it is given here: it may be left out, see BT_TEST_LABELS); its cases are
#   discovered after the build. DEPENDS: what its cases run besides it. SLOW: the cases (names after "<module>.")
#   labelled slow instead of `kind`. SERIAL: the cases that run alone (RUN_SERIAL): they time their own processes on
#   a 2-core machine, or kill at chosen moments, and must not be starved by a neighbour. PROPERTIES: single-valued
#   test properties (TIMEOUT, FIXTURES_REQUIRED, ...).
# bt_add_test(NAME name LABELS kind [threads] COMMAND ... [NEEDS target...] [MODULE m] [ENVIRONMENT ...]
#             [PROPERTIES name value...])
#   One command test, named <module>.<name>. NEEDS: the targets the command runs (built by bt_tests; the test is
#   left out where one of them is not built). MODULE: for tests outside tests/ and bench/ (style).
#
# BT_TEST_LABELS (a list; empty: all) adds only the executables and command tests carrying one of those labels, and
# the target bt_tests builds exactly what the added tests run: a configuration that runs a subset (TSan) builds
# `bt_tests` and compiles nothing else.
set(BT_TEST_LABELS "" CACHE STRING "Add only the tests with one of these labels (e.g. threads); empty: every test")
set(BT_TEST_KINDS unit slow gpu)
set(BT_TEST_TAGS threads)
add_custom_target(bt_tests)

# The module a test belongs to: MODULE when given, else the folder under tests/ (or "bench").
function(_bt_test_module out explicit)
  file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
  if(explicit)
    set(m ${explicit})
  elseif(rel MATCHES "^tests/([^/]+)")
    set(m ${CMAKE_MATCH_1})
  elseif(rel MATCHES "^bench(/|$)")
    set(m bench)
  else()
    message(FATAL_ERROR "${rel}: a test outside tests/ and bench/ names its MODULE")
  endif()
  set(${out} ${m} PARENT_SCOPE)
endfunction()

# <kind>: the one kind among the labels (an error unless exactly one, or on an unknown label); <tags>: the others;
# <keep>: whether BT_TEST_LABELS wants a test with these labels or with <extra> (a kind some of its cases get).
function(_bt_test_labels name kind tags keep extra)
  set(kinds "")
  set(others "")
  foreach(l IN LISTS ARGN)
    if(l IN_LIST BT_TEST_KINDS)
      list(APPEND kinds ${l})
    elseif(l IN_LIST BT_TEST_TAGS)
      list(APPEND others ${l})
    else()
      message(FATAL_ERROR "${name}: unknown label '${l}' (kinds: ${BT_TEST_KINDS}; tags: ${BT_TEST_TAGS})")
    endif()
  endforeach()
  list(LENGTH kinds n)
  if(NOT n EQUAL 1)
    message(FATAL_ERROR "${name}: LABELS needs exactly one of ${BT_TEST_KINDS}, got '${ARGN}'")
  endif()
  set(k TRUE)
  if(BT_TEST_LABELS)
    set(k FALSE)
    foreach(l IN LISTS ARGN extra)
      if(l IN_LIST BT_TEST_LABELS)
        set(k TRUE)
      endif()
    endforeach()
  endif()
  set(${kind} ${kinds} PARENT_SCOPE)
  set(${tags} "${others}" PARENT_SCOPE)
  set(${keep} ${k} PARENT_SCOPE)
endfunction()

# Every test's XDG_CACHE_HOME is the build's (unless the test names its own): what a run caches for the user, the
# CPU peak behind MFU (model/flops_peak.h), is never read from or written to the user's ~/.cache by a test.
function(_bt_test_environment out)
  set(env ${ARGN})
  if(NOT env MATCHES "(^|;)XDG_CACHE_HOME=")
    list(PREPEND env "XDG_CACHE_HOME=${CMAKE_BINARY_DIR}/test_xdg_cache")
  endif()
  set(${out} "${env}" PARENT_SCOPE)
endfunction()

function(bt_add_gtest)
  cmake_parse_arguments(PARSE_ARGV 0 T "" "NAME;DISCOVERY_TIMEOUT;PCH_FROM"
                        "SOURCES;LIBS;LABELS;DEFINITIONS;INCLUDES;DEPENDS;SLOW;SERIAL;ENVIRONMENT;PROPERTIES")
  list(JOIN T_SLOW "|" T_SLOW)
  list(JOIN T_SERIAL "|" T_SERIAL)
  _bt_test_module(module "")
  if(NOT T_NAME MATCHES "^test_${module}(_[a-z0-9_]+)?$")
    message(FATAL_ERROR "test executable '${T_NAME}' in tests/${module}: name it test_${module}[_<topic>]")
  endif()
  set(extra "")
  if(T_SLOW)
    set(extra slow)
  endif()
  _bt_test_labels(${T_NAME} kind tags keep "${extra}" ${T_LABELS})
  if(NOT keep)
    return()
  endif()
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gtest_main)
  if(T_DEFINITIONS)
    target_compile_definitions(${T_NAME} PRIVATE ${T_DEFINITIONS})
  endif()
  if(T_INCLUDES)
    target_include_directories(${T_NAME} PRIVATE ${T_INCLUDES})
  endif()
  if(T_PCH_FROM)
    target_precompile_headers(${T_NAME} REUSE_FROM ${T_PCH_FROM})
  endif()
  if(T_DEPENDS)
    add_dependencies(${T_NAME} ${T_DEPENDS})
  endif()
  add_dependencies(bt_tests ${T_NAME})
  if(NOT T_DISCOVERY_TIMEOUT)
    set(T_DISCOVERY_TIMEOUT 60)  # libtorch executables take seconds to list their cases on a loaded machine
  endif()
  gtest_discover_tests(${T_NAME} TEST_PREFIX "${module}." TEST_LIST ${T_NAME}_TESTS
                       DISCOVERY_TIMEOUT ${T_DISCOVERY_TIMEOUT})
  # The cases' properties come from a file ctest includes after the discovered cases (it sees their list,
  # ${NAME}_TESTS): gtest_discover_tests flattens list-valued PROPERTIES (two labels, two variables), and a case's
  # kind may differ from its executable's (SLOW).
  set(labels "\${kind}")
  if(tags)
    string(APPEND labels ";${tags}")
  endif()
  string(CONCAT body "# Written by bt_add_gtest (cmake/bt_tests.cmake).\n"
              "foreach(t IN LISTS ${T_NAME}_TESTS)\n  set(kind ${kind})\n")
  if(T_SLOW)
    string(APPEND body "  if(t MATCHES [==[^${module}\\.(${T_SLOW})$]==])\n    set(kind slow)\n  endif()\n")
  endif()
  string(APPEND body "  set_tests_properties(\"\${t}\" PROPERTIES LABELS \"${labels}\""
                     " SKIP_REGULAR_EXPRESSION [==[\\[  SKIPPED \\]]==]")
  _bt_test_environment(T_ENVIRONMENT ${T_ENVIRONMENT})
  string(APPEND body " ENVIRONMENT [==[${T_ENVIRONMENT}]==]")
  foreach(p IN LISTS T_PROPERTIES)
    string(APPEND body " [==[${p}]==]")
  endforeach()
  string(APPEND body ")\n")
  if(T_SERIAL)
    string(APPEND body "  if(t MATCHES [==[^${module}\\.(${T_SERIAL})$]==])\n"
                       "    set_tests_properties(\"\${t}\" PROPERTIES RUN_SERIAL TRUE)\n  endif()\n")
  endif()
  string(APPEND body "endforeach()\n")
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/${T_NAME}_properties.cmake "${body}")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${CMAKE_CURRENT_BINARY_DIR}/${T_NAME}_properties.cmake)
endfunction()

function(bt_add_test)
  cmake_parse_arguments(PARSE_ARGV 0 T "" "NAME;MODULE" "LABELS;COMMAND;NEEDS;ENVIRONMENT;PROPERTIES")
  _bt_test_module(module "${T_MODULE}")
  _bt_test_labels(${module}.${T_NAME} kind tags keep "" ${T_LABELS})
  foreach(t IN LISTS T_NEEDS)
    if(NOT TARGET ${t})
      set(keep FALSE)
    endif()
  endforeach()
  if(NOT keep)
    return()
  endif()
  add_test(NAME ${module}.${T_NAME} COMMAND ${T_COMMAND})
  set_tests_properties(${module}.${T_NAME} PROPERTIES LABELS "${T_LABELS}" ${T_PROPERTIES})
  _bt_test_environment(T_ENVIRONMENT ${T_ENVIRONMENT})
  set_tests_properties(${module}.${T_NAME} PROPERTIES ENVIRONMENT "${T_ENVIRONMENT}")
  if(T_NEEDS)
    add_dependencies(bt_tests ${T_NEEDS})
  endif()
endfunction()
