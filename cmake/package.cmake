# What `find_package(cutune)` finds after `cmake --install`: the cutune::lookup target, its
# headers under include/cutune, and the path of the installed `tune`.
include(CMakePackageConfigHelpers)
set(CUTUNE_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/cutune)
install(EXPORT cutuneTargets NAMESPACE cutune:: DESTINATION ${CUTUNE_PACKAGE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/cutuneConfig.cmake.in ${CMAKE_BINARY_DIR}/cutuneConfig.cmake
                              INSTALL_DESTINATION ${CUTUNE_PACKAGE_DIR} PATH_VARS CMAKE_INSTALL_BINDIR)
# 0.x: a new minor version may change the API.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cutuneConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/cutuneConfig.cmake ${CMAKE_BINARY_DIR}/cutuneConfigVersion.cmake
        DESTINATION ${CUTUNE_PACKAGE_DIR})
