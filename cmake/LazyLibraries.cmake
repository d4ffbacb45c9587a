# LazyLibraries.cmake — courier_bind_lazily(): links an executable without
# some shared libraries and with lazy-binding stubs for the functions it
# calls of them instead (docs/design.md "A cheap start"; the stubs:
# cmake/lazy_stubs.cmake and src/sys/lazy_stubs_x86_64.S.in; the loader:
# src/sys/lazy_library_linux.cpp).
#
#   courier_bind_lazily(TARGET INPUTS archive-target... LIBRARIES "label|path-of-the-.so"...)
#
# INPUTS are the static libraries whose undefined symbols are searched; the
# target must not link the LIBRARIES (its COURIER_LAZY_LIBS property, set
# here, drops them from the components' link interface). Each library is
# loaded by the SONAME read from the file the build would have linked, so
# the library loaded later is the one linked against now.
enable_language(ASM)

function(courier_bind_lazily target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "INPUTS;LIBRARIES")
  set(entries)
  foreach(library ${arg_LIBRARIES})
    string(REPLACE "|" ";" fields "${library}")
    list(GET fields 0 label)
    list(GET fields 1 path)
    if(NOT EXISTS "${path}")
      message(FATAL_ERROR "COURIER_LAZY_LIBS: the ${label} library '${path}' does not exist; configure with "
                          "-DCOURIER_LAZY_LIBS=OFF to link it directly")
    endif()
    execute_process(COMMAND ${CMAKE_OBJDUMP} -p ${path} OUTPUT_VARIABLE headers RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0 OR NOT headers MATCHES "SONAME +([^\n ]+)")
      message(FATAL_ERROR "COURIER_LAZY_LIBS: cannot read the SONAME of ${path}; configure with "
                          "-DCOURIER_LAZY_LIBS=OFF to link it directly")
    endif()
    list(APPEND entries "${label}|${CMAKE_MATCH_1}|${path}")
  endforeach()
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/lazy-${target})
  string(REPLACE ";" "\n" entries_text "${entries}")
  file(WRITE ${dir}/libraries.txt "${entries_text}\n")
  set(archives)
  foreach(input ${arg_INPUTS})
    list(APPEND archives $<TARGET_FILE:${input}>)
  endforeach()
  file(GENERATE OUTPUT ${dir}/inputs.txt CONTENT "$<JOIN:${archives},\n>\n")
  set(template ${PROJECT_SOURCE_DIR}/src/sys/lazy_stubs_x86_64.S.in)
  add_custom_command(OUTPUT ${dir}/stubs.S
    COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} -DINPUTS=${dir}/inputs.txt -DLIBRARIES=${dir}/libraries.txt
            -DTEMPLATE=${template} -DOUTPUT=${dir}/stubs.S -P ${PROJECT_SOURCE_DIR}/cmake/lazy_stubs.cmake
    DEPENDS ${arg_INPUTS} ${template} ${PROJECT_SOURCE_DIR}/cmake/lazy_stubs.cmake ${dir}/libraries.txt
    COMMENT "Writing the lazy-binding stubs of ${target}" VERBATIM)
  target_sources(${target} PRIVATE ${dir}/stubs.S)
  set_target_properties(${target} PROPERTIES COURIER_LAZY_LIBS ON)
endfunction()
