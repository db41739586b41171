# ctest cli.install: `cmake --install BUILD --prefix PREFIX` into an empty folder gives the layout README.md's
# "Install" describes: a bin/bridgetune that runs, the Python package importable from PREFIX/PYDIR (when the module
# is built: PYTHON is its interpreter), and the docs.
# cmake -DBUILD=dir -DPREFIX=dir -DVERSION=x.y -DPYDIR=rel -DDOCDIR=rel [-DPYTHON=python3] -P install_check.cmake
file(REMOVE_RECURSE ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${PREFIX}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc}):\n${out}")
endif()
execute_process(COMMAND ${PREFIX}/bin/bridgetune --version RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out STREQUAL "bridgetune ${VERSION}\n")
  message(FATAL_ERROR "${PREFIX}/bin/bridgetune --version: exit ${rc}, '${out}' (expected 'bridgetune ${VERSION}')")
endif()
foreach(f ${DOCDIR}/README.md ${DOCDIR}/docs/PERFORMANCE.md ${DOCDIR}/docs/RELIABILITY.md ${DOCDIR}/examples)
  if(NOT EXISTS ${PREFIX}/${f})
    message(FATAL_ERROR "not installed: ${PREFIX}/${f}")
  endif()
endforeach()
if(PYTHON)
  # From a neutral folder, so the package found is the installed one, not a source tree's.
  execute_process(COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${PREFIX}/${PYDIR} PYTHONDONTWRITEBYTECODE=1
                          ${PYTHON} -c "import bridgetune; print(bridgetune.__file__)"
                  WORKING_DIRECTORY ${PREFIX} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "^${PREFIX}/${PYDIR}/bridgetune/__init__.py")
    message(FATAL_ERROR "import bridgetune from ${PREFIX}/${PYDIR}: exit ${rc}, ${out}")
  endif()
endif()
file(REMOVE_RECURSE ${PREFIX})
message(STATUS "installed and ran bridgetune ${VERSION} from ${PREFIX}")
