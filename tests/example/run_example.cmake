# Installs cutune into a fresh prefix, builds examples/scan_app against that installed package
# alone, and runs it on the fixture's database. Without a GPU the lookup part must still run and
# print the config; with one, the launch must verify.
#   cmake -DBUILD_DIR=… -DSOURCE_DIR=… -DWORK_DIR=… -DDATABASE=… -DGENERATOR=… -P run_example.cmake
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}")
  endif()
  set(output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
foreach(installed bin/tune include/cutune/lookup.hpp include/cutune/cutune_lookup.h lib/cmake/cutune/cutuneConfig.cmake)
  if(NOT EXISTS ${WORK_DIR}/prefix/${installed})
    message(FATAL_ERROR "cmake --install did not install ${installed}")
  endif()
endforeach()
run("configuring the example" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/scan_app -B ${WORK_DIR}/build -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=Release -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
run("building the example" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run("scan_app" ${WORK_DIR}/build/scan_app --db ${DATABASE} --n 1000000 --device-name "Example GPU" --cc 9.0)
message("${output}")
foreach(expected "config     algo=lookback,block=256,ept=8,vec=4,pad=1" "cubin      [0-9]+ bytes for sm_90")
  if(NOT output MATCHES "${expected}")
    message(FATAL_ERROR "scan_app's output lacks '${expected}'")
  endif()
endforeach()
if(NOT output MATCHES "gpu        (verified|skipped)")
  message(FATAL_ERROR "scan_app neither verified a launch nor said why it skipped it")
endif()
