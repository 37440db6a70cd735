# Install TensorBridge into a temporary prefix, then build and run a tiny consumer program twice:
# once with pkg-config, once with find_package(TensorBridge).
file(REMOVE_RECURSE ${WORK_DIR})
set(PREFIX ${WORK_DIR}/prefix)
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BINARY_DIR} --prefix ${PREFIX} RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed: ${rc}")
endif()

# pkg-config route
set(ENV{PKG_CONFIG_PATH} ${PREFIX}/${LIBDIR}/pkgconfig)
execute_process(COMMAND pkg-config --cflags --libs tensorbridge OUTPUT_VARIABLE flags RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config --cflags --libs tensorbridge failed")
endif()
separate_arguments(flag_list UNIX_COMMAND "${flags}")
execute_process(COMMAND cc -std=c11 -Wall -Werror ${SOURCE_DIR}/tests/consumer/consumer.c ${flag_list}
                        -Wl,-rpath,${PREFIX}/${LIBDIR} -o ${WORK_DIR}/consumer_pc RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "compiling the consumer with pkg-config flags failed")
endif()
execute_process(COMMAND ${WORK_DIR}/consumer_pc RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "devices: [0-9]+")
  message(FATAL_ERROR "the pkg-config consumer failed (${rc}): ${out}")
endif()

# find_package route
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer -B ${WORK_DIR}/build
                        -DCMAKE_PREFIX_PATH=${PREFIX} RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the find_package consumer failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the find_package consumer failed")
endif()
foreach(exe consumer_shared consumer_static)
  execute_process(COMMAND ${WORK_DIR}/build/${exe} RESULT_VARIABLE rc OUTPUT_VARIABLE out)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "devices: [0-9]+")
    message(FATAL_ERROR "${exe} failed (${rc}): ${out}")
  endif()
endforeach()
message(STATUS "consumer builds and runs with pkg-config and find_package")
