# cmake --install: the header, libtensorjit.so.0 and libtensorjit.a,
# tensorjit.pc, the CMake package (tensorjit::tensorjit, the shared library),
# and with the CLI bin/tensorjit and its man page.

install(FILES ${PROJECT_SOURCE_DIR}/include/tensorjit.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS tensorjit ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})

if(TENSORJIT_BUILD_SHARED)
  install(TARGETS tensorjit_shared EXPORT tensorjitTargets
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  set(tj_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/tensorjit)
  install(EXPORT tensorjitTargets NAMESPACE tensorjit:: DESTINATION ${tj_cmake_dir})
  include(CMakePackageConfigHelpers)
  configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tensorjitConfig.cmake.in
    ${PROJECT_BINARY_DIR}/tensorjitConfig.cmake INSTALL_DESTINATION ${tj_cmake_dir})
  # 0.x: a minor version may change the ABI, so only the same minor matches
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/tensorjitConfigVersion.cmake
    COMPATIBILITY SameMinorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/tensorjitConfig.cmake
                ${PROJECT_BINARY_DIR}/tensorjitConfigVersion.cmake
          DESTINATION ${tj_cmake_dir})
endif()

# tensorjit.pc. Libs.private and Requires.private are what a static link
# (pkg-config --static, libtensorjit.a) needs on top of -ltensorjit.
# Relocatable: prefix is found from the .pc file's own folder, so that
# cmake --install --prefix DIR (or a copied tree) needs no new configure.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(TJ_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(TJ_PC_LIBDIR "${CMAKE_INSTALL_FULL_LIBDIR}")
  set(TJ_PC_INCLUDEDIR "${CMAKE_INSTALL_FULL_INCLUDEDIR}")
else()
  file(RELATIVE_PATH tj_up "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
  string(REGEX REPLACE "/$" "" tj_up "${tj_up}")
  set(TJ_PC_PREFIX "\${pcfiledir}/${tj_up}")
  set(TJ_PC_LIBDIR "\${exec_prefix}/${CMAKE_INSTALL_LIBDIR}")
  set(TJ_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
set(TJ_PC_REQUIRES_PRIVATE "libffi")
set(TJ_PC_LIBS_PRIVATE "")
if(TENSORJIT_WITH_JIT)
  string(APPEND TJ_PC_REQUIRES_PRIVATE " libcrypto")
  # LLVM's shared library, as `llvm-config --link-shared --ldflags --libs`
  # names it (-lLLVM-19); found in LLVM's own lib folder
  string(APPEND TJ_PC_LIBS_PRIVATE "-L${LLVM_LIBRARY_DIR} -lLLVM-${LLVM_VERSION_MAJOR} ")
endif()
string(APPEND TJ_PC_LIBS_PRIVATE "-pthread")
configure_file(${PROJECT_SOURCE_DIR}/cmake/tensorjit.pc.in
               ${PROJECT_BINARY_DIR}/tensorjit.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tensorjit.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

if(TENSORJIT_BUILD_CLI)
  install(TARGETS tensorjit-cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(FILES ${PROJECT_SOURCE_DIR}/tools/tensorjit.1
          DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()

# cpack -G DEB (from the build folder): one .deb with the layout above under
# /usr; its Depends come from dpkg-shlibdeps (libllvm, libffi, libssl,
# libxml2 for the CLI, libc).
set(CPACK_PACKAGE_NAME tensorjit)
set(CPACK_PACKAGE_VENDOR tensorjit)
set(CPACK_PACKAGE_CONTACT "tensorjit maintainers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${TENSORJIT_DESCRIPTION}")
set(CPACK_PACKAGE_DESCRIPTION "${TENSORJIT_DESCRIPTION}. \
The library (tensorjit.h, libtensorjit.so.0, libtensorjit.a) turns one layer's \
signature into a plain C function pointer for exactly that signature, cached \
in memory and on disk; the tensorjit command runs, checks and explains kernels \
and compiles the indexing layers of OpenVINO and ONNX models.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
include(CPack)
