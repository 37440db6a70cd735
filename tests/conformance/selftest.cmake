# conformance_selftest: runs tb_conformance on tests/conformance/selftest (made by make_selftest.py there),
# whose outcomes are known, and checks each one: a pass, a value within tolerance, NaN equal to NaN, a
# wrong value with its first mismatching element, a wrong shape, an integer off by one, an unsupported op
# skipped with the library's reason, a model test, --check, and --backend (an unknown one is skipped). Usage: cmake -DRUNNER=... -DDATA=... -P selftest.cmake
execute_process(COMMAND ${RUNNER} --data ${DATA} --verbose --jobs 2 --expected /dev/null
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(expected
  "passed  node/test_selftest_add_pass \\(Add,"
  "passed  node/test_selftest_add_within_tolerance \\(Add,"
  "passed  node/test_selftest_div_nan \\(Div,"
  "failed  node/test_selftest_add_wrong \\(Add, [0-9]+ ms\\): test_data_set_0: output 0 'y' \\(f32\\): element \\[1, 2\\] is 1.75, expected 1.75999999; 1 of 6 elements out of tolerance \\(rtol 0.001, atol 1e-07\\)"
  "failed  node/test_selftest_add_wrong_shape \\(Add, [0-9]+ ms\\): test_data_set_0: output 0 'y' has shape \\[2, 3\\], expected \\[3, 2\\]"
  "failed  node/test_selftest_int_off_by_one \\(Add, [0-9]+ ms\\): test_data_set_0: output 0 'y' \\(i64\\): element \\[2\\] is 6, expected 7; 1 of 3 elements different \\(compared exactly\\)"
  "skipped node/test_selftest_unsupported_op \\(NoSuchOp, [0-9]+ ms\\): tb_model_prepare: TB_ERR_UNSUPPORTED: .*NoSuchOp"
  "passed  pytorch-converted/test_selftest_model \\(\\(model\\),")
foreach(line IN LISTS expected)
  if(NOT err MATCHES "${line}")
    message(FATAL_ERROR "tb_conformance did not print a line matching\n  ${line}\n--- stderr:\n${err}\n--- stdout:\n${out}")
  endif()
endforeach()
if(NOT out MATCHES "node tests at O0: 3 passed, 3 failed, 1 skipped of 7, 3 operators")
  message(FATAL_ERROR "wrong node totals:\n${out}")
endif()
if(NOT out MATCHES "model tests at O0: 1 passed, 0 failed, 0 skipped of 1")
  message(FATAL_ERROR "wrong model totals:\n${out}")
endif()
if(NOT code EQUAL 1)
  message(FATAL_ERROR "exit code ${code}; with failures it must be 1")
endif()
# --check with an expected file that lists the three failures passes; the floor counts.
file(WRITE ${WORK}/expected.txt "floor all O0 4\ntest_selftest_add_wrong  deliberate\ntest_selftest_add_wrong_shape  deliberate\ntest_selftest_int_off_by_one  deliberate\n")
execute_process(COMMAND ${RUNNER} --data ${DATA} --check --expected ${WORK}/expected.txt RESULT_VARIABLE code
                OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "--check with every failure listed exited ${code}:\n${err}")
endif()
file(WRITE ${WORK}/expected.txt "floor all O0 5\ntest_selftest_add_wrong  deliberate\ntest_selftest_add_wrong_shape  deliberate\ntest_selftest_int_off_by_one  deliberate\n")
execute_process(COMMAND ${RUNNER} --data ${DATA} --check --expected ${WORK}/expected.txt RESULT_VARIABLE code
                OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT code EQUAL 1 OR NOT err MATCHES "PASS COUNT DROPPED: 4 passed, below the floor of 5")
  message(FATAL_ERROR "--check below the floor exited ${code}:\n${err}")
endif()
file(WRITE ${WORK}/expected.txt "test_selftest_add_wrong  deliberate\n")
execute_process(COMMAND ${RUNNER} --data ${DATA} --check --expected ${WORK}/expected.txt RESULT_VARIABLE code
                OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT code EQUAL 1 OR NOT err MATCHES "UNEXPECTED failures.*test_selftest_int_off_by_one")
  message(FATAL_ERROR "--check with unlisted failures exited ${code}:\n${err}")
endif()
file(WRITE ${WORK}/expected.txt "test_selftest_add_wrong\n")
execute_process(COMMAND ${RUNNER} --data ${DATA} --expected ${WORK}/expected.txt RESULT_VARIABLE code
                OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT code EQUAL 2 OR NOT err MATCHES "listed without a reason")
  message(FATAL_ERROR "an expected failure without a reason was accepted (exit ${code}):\n${err}")
endif()
# a backend that does not exist here: skipped (77) with the library's reason; one that does: the on-device count
execute_process(COMMAND ${RUNNER} --data ${DATA} --backend nosuch RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 77 OR NOT err MATCHES "tb_conformance: backend 'nosuch' is not available here: ")
  message(FATAL_ERROR "--backend nosuch exited ${code}:\n${err}")
endif()
execute_process(COMMAND ${RUNNER} --data ${DATA} --backend opencl:0 --expected /dev/null
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 77 AND NOT out MATCHES "node tests at O0 on opencl:0: 3 passed \\([0-3] wholly on the device\\), 3 failed, 1 skipped of 7")
  message(FATAL_ERROR "--backend opencl:0 exited ${code}:\n${out}\n${err}")
endif()
