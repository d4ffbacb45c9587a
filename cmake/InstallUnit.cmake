# InstallUnit.cmake — run by `cmake --install` (install(CODE) in
# CMakeLists.txt): writes contrib/git-courier.service.in out with the paths
# of this install and installs it, so the unit's ExecStart= is the binary
# just installed and its Documentation= the man page and docs/service.md
# installed beside it. Run at install time, not at configure time, because
# `cmake --install BUILD --prefix P` chooses the prefix only then.
#
# Given by the caller: COURIER_UNIT_TEMPLATE, COURIER_UNIT_OUTPUT (a file of
# the build tree), and the install directories as configured
# (COURIER_UNIT_BINDIR, COURIER_UNIT_DOCDIR, COURIER_UNIT_DIR), each relative
# to the prefix or absolute.

# A directory as the installed system sees it: under the prefix unless
# absolute (DESTDIR, a staging root, is never part of it).
function(courier_unit_full_path out dir)
  if(IS_ABSOLUTE "${dir}")
    set(${out} "${dir}" PARENT_SCOPE)
  else()
    set(${out} "${CMAKE_INSTALL_PREFIX}/${dir}" PARENT_SCOPE)
  endif()
endfunction()

courier_unit_full_path(bindir "${COURIER_UNIT_BINDIR}")
courier_unit_full_path(docdir "${COURIER_UNIT_DOCDIR}")
courier_unit_full_path(unitdir "${COURIER_UNIT_DIR}")
set(COURIER_UNIT_BINARY "${bindir}/git-courier")
set(COURIER_UNIT_DOC "${docdir}/service.md")
# systemd reads % as a specifier, $ as a variable, a space or a quote as the
# end of a word: a path holding one would name another file than the one
# installed. Such a prefix is refused rather than escaped half-right.
foreach(p "${COURIER_UNIT_BINARY}" "${COURIER_UNIT_DOC}")
  if(NOT p MATCHES "^/[A-Za-z0-9/._+-]*$")
    message(FATAL_ERROR "git-courier.service cannot name ${p}: an installed path for the systemd unit may hold only "
                        "letters, digits and / . _ + -")
  endif()
endforeach()
configure_file("${COURIER_UNIT_TEMPLATE}" "${COURIER_UNIT_OUTPUT}" @ONLY)
file(INSTALL DESTINATION "${unitdir}" TYPE FILE
     PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
     FILES "${COURIER_UNIT_OUTPUT}")
