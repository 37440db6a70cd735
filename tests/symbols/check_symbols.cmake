# Every global symbol the static library defines starts with tb_ or TB_, so nothing of ours can clash with a
# name in a user's program when they link libtensorbridge.a. Run by CTest (static_library_symbols):
#   cmake -DNM=<nm> -DLIBRARY=<libtensorbridge.a> -P check_symbols.cmake
execute_process(COMMAND ${NM} -g --defined-only ${LIBRARY} OUTPUT_VARIABLE listing RESULT_VARIABLE rc
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} could not read ${LIBRARY}: ${err}")
endif()
string(REPLACE "\n" ";" lines "${listing}")
set(count 0)
set(bad "")
foreach(line IN LISTS lines)
  # "ADDRESS TYPE NAME" for a defined symbol; member headers ("file.o:") and blank lines have fewer fields
  if(line MATCHES "^[0-9a-fA-F]+ [A-Za-z] ([^ ]+)$")
    set(name "${CMAKE_MATCH_1}")
    # AddressSanitizer adds "__odr_asan.NAME" for each global NAME of ours: NAME is what is checked
    string(REGEX REPLACE "^__odr_asan[.]" "" name "${name}")
    math(EXPR count "${count} + 1")
    if(NOT name MATCHES "^(tb_|TB_)")
      list(APPEND bad "${name}")
    endif()
  endif()
endforeach()
if(count EQUAL 0)
  message(FATAL_ERROR "no defined global symbol found in ${LIBRARY}: the check read nothing (is ${NM} GNU nm?)")
endif()
if(bad)
  list(REMOVE_DUPLICATES bad)
  list(LENGTH bad n)
  string(REPLACE ";" "\n  " shown "${bad}")
  message(FATAL_ERROR "${n} global symbols of ${LIBRARY} lack the tb_ prefix; give each one tb_ "
                      "(or make it static):\n  ${shown}")
endif()
message(STATUS "${count} global symbols, all with the tb_ or TB_ prefix")
