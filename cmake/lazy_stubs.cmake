# lazy_stubs.cmake — writes the lazy-binding stubs of the shipped executable
# (docs/design.md "A cheap start"). Run in script mode at build time:
#
#   cmake -DNM=nm -DINPUTS=list-file -DLIBRARIES=list-file -DTEMPLATE=file.S.in -DOUTPUT=stubs.S -P lazy_stubs.cmake
#
# INPUTS names the archives that go into the executable, one a line.
# LIBRARIES names the libraries bound lazily, one a line, as
# "label|SONAME|path-of-the-.so". For each library, the functions our
# objects call (`nm -u` over INPUTS) that the library defines (`nm -D
# --defined-only`) each get a stub; a data symbol cannot be reached through a
# jump, so needing one stops the build with its name.

cmake_minimum_required(VERSION 3.25)

foreach(var NM INPUTS LIBRARIES TEMPLATE OUTPUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "lazy_stubs.cmake: -D${var}= is required")
  endif()
endforeach()

file(STRINGS ${INPUTS} inputs)
file(STRINGS ${LIBRARIES} libraries)

execute_process(COMMAND ${NM} -u ${inputs} OUTPUT_VARIABLE undefined_text RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "lazy_stubs.cmake: ${NM} -u failed on ${inputs}")
endif()
string(REGEX MATCHALL "[ \t]U [^\n]+" undefined_lines "${undefined_text}")
set(undefined)
foreach(line ${undefined_lines})
  string(REGEX REPLACE "^[ \t]U " "" name "${line}")
  list(APPEND undefined ${name})
endforeach()
list(REMOVE_DUPLICATES undefined)

file(READ ${TEMPLATE} template)
string(REGEX MATCH "@LIBRARY_BEGIN@\n(.*)@LIBRARY_END@\n" library_block "${template}")
set(library_template "${CMAKE_MATCH_1}")
set(inner_blocks STUB SLOT NAME)
foreach(inner ${inner_blocks})
  string(REGEX MATCH "@${inner}_BEGIN@\n(.*)@${inner}_END@\n" block "${library_template}")
  if(NOT block)
    message(FATAL_ERROR "lazy_stubs.cmake: ${TEMPLATE} lacks a ${inner} block")
  endif()
  set(${inner}_template "${CMAKE_MATCH_1}")
endforeach()

set(claimed)
set(body "")
set(summary "")
foreach(entry ${libraries})
  string(REPLACE "|" ";" fields "${entry}")
  list(GET fields 0 label)
  list(GET fields 1 soname)
  list(GET fields 2 path)
  execute_process(COMMAND ${NM} -D --defined-only ${path} OUTPUT_VARIABLE exported RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "lazy_stubs.cmake: ${NM} -D failed on ${path}")
  endif()
  string(REGEX MATCHALL "[^\n]+" exported_lines "${exported}")
  set(functions)
  foreach(line ${exported_lines})
    if(NOT line MATCHES "^[0-9a-fA-F]+ ([A-Za-z]) ([A-Za-z0-9_]+)")
      continue()
    endif()
    set(kind ${CMAKE_MATCH_1})
    set(name ${CMAKE_MATCH_2})
    if(NOT name IN_LIST undefined OR name IN_LIST claimed)
      continue()
    endif()
    if(NOT kind MATCHES "^[TWi]$")
      message(FATAL_ERROR "lazy_stubs.cmake: the executable uses ${name}, a data symbol (nm kind ${kind}) of "
                          "${soname}; a lazy stub can only stand for a function. Call a function instead, or "
                          "configure with -DCOURIER_LAZY_LIBS=OFF.")
    endif()
    list(APPEND functions ${name})
    list(APPEND claimed ${name})
  endforeach()
  list(SORT functions)
  list(LENGTH functions count)
  set(block "${library_template}")
  foreach(inner ${inner_blocks})
    set(repeated "")
    set(index 0)
    foreach(name ${functions})
      string(REPLACE "@SYMBOL@" "${name}" one "${${inner}_template}")
      string(REPLACE "@INDEX@" "${index}" one "${one}")
      string(APPEND repeated "${one}")
      math(EXPR index "${index} + 1")
    endforeach()
    string(REGEX REPLACE "@${inner}_BEGIN@\n.*@${inner}_END@\n" "@${inner}S@" block "${block}")
    string(REPLACE "@${inner}S@" "${repeated}" block "${block}")
  endforeach()
  string(REPLACE "@LABEL@" "${label}" block "${block}")
  string(REPLACE "@SONAME@" "${soname}" block "${block}")
  string(REPLACE "@COUNT@" "${count}" block "${block}")
  string(APPEND body "${block}")
  string(APPEND summary " ${soname}:${count}")
endforeach()

string(REGEX REPLACE "@LIBRARY_BEGIN@\n.*@LIBRARY_END@\n" "@LIBRARIES@" out "${template}")
string(REPLACE "@LIBRARIES@" "${body}" out "${out}")
# Rewritten only when it changes, so a relink of the archives that calls the
# same functions does not reassemble the stubs.
set(tmp ${OUTPUT}.tmp)
file(WRITE ${tmp} "${out}")
file(COPY_FILE ${tmp} ${OUTPUT} ONLY_IF_DIFFERENT)
file(REMOVE ${tmp})
message(STATUS "lazy stubs:${summary}")
