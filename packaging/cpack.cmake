# Debian package of `cfp`, `cfp-explorer` (when built), the resources, the desktop entry, the
# AppStream metadata and the icon:
#   cmake --build --preset default && (cd build/default && cpack -G DEB && dpkg-deb -c cfp-explorer_*.deb)
set(CPACK_PACKAGE_NAME "cfp-explorer")
set(CPACK_PACKAGE_VENDOR "CFP Explorer")
set(CPACK_PACKAGE_CONTACT "CFP Explorer developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
set(CPACK_PACKAGE_DESCRIPTION "Plans intra-operator parallelism for large-model training (CFP): a Qt desktop explorer and the headless cfp tool.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
if(TARGET cfp-explorer)
  # Loaded at run time, so dpkg-shlibdeps cannot see them: the SVG icon plugin and the platform plugins.
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libqt6svg6, qt6-qpa-plugins")
endif()
set(CPACK_GENERATOR "DEB;TGZ")
include(CPack)
