# ctest style.test_labels: every test of the build in BUILD carries exactly one kind label (unit, slow, gpu) and a
# "<module>." prefix, as cmake/bt_tests.cmake promises. Catches a test added around the helpers, and a discovered case
# the helpers' property file missed (gtest_discover_tests leaves names with brackets out of its list).
# Counts rather than per-test JSON (string(JSON) over ~500 tests takes seconds): each test has exactly one kind
# when the tests with any kind are all of them and the three kinds' counts add up to that total.
# cmake -DCTEST=ctest -DBUILD=dir -P check_test_labels.cmake
function(count out)
  # -FA: a label selects its tests alone, not the fixture set-ups they require (ctest adds those otherwise).
  execute_process(COMMAND ${CTEST} --test-dir ${BUILD} -N -FA ".*" ${ARGN} OUTPUT_VARIABLE text RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR NOT text MATCHES "Total Tests: ([0-9]+)")
    message(FATAL_ERROR "ctest -N ${ARGN} failed (${rc})")
  endif()
  set(${out} ${CMAKE_MATCH_1} PARENT_SCOPE)
  set(${out}_text "${text}" PARENT_SCOPE)
endfunction()
count(total)
count(any -L "^(unit|slow|gpu)$")
count(unit -L "^unit$")
count(slow -L "^slow$")
count(gpu -L "^gpu$")
math(EXPR sum "${unit} + ${slow} + ${gpu}")
if(NOT any EQUAL total OR NOT sum EQUAL total)
  count(none -LE "^(unit|slow|gpu)$")
  message(FATAL_ERROR "${total} tests, ${any} with a kind label, kinds summing to ${sum} (unit ${unit}, slow ${slow}, "
                      "gpu ${gpu}): every test needs exactly one of unit/slow/gpu. Unlabelled:\n${none_text}")
endif()
string(REGEX MATCHALL "Test +#[0-9]+: [^\n]*" lines "${total_text}")
foreach(l IN LISTS lines)
  if(NOT l MATCHES "Test +#[0-9]+: [a-z_]+\\.")
    message(FATAL_ERROR "no <module>. prefix: ${l}")
  endif()
endforeach()
message(STATUS "${total} tests: unit ${unit}, slow ${slow}, gpu ${gpu}; each with a module prefix")
