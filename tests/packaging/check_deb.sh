#!/usr/bin/env bash
# Builds the Debian package from a finished build tree (cpack -G DEB) into a temporary folder and
# checks its contents list: both programs, the resources, the desktop entry, the AppStream metadata
# and the icon. Usage: check_deb.sh BUILD_DIR
set -euo pipefail
build="$1"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
(cd "$build" && cpack -G DEB -B "$out" >"$out/cpack.log" 2>&1) || { cat "$out/cpack.log"; exit 1; }
deb="$(ls "$out"/*.deb)"
contents="$(dpkg-deb -c "$deb" | awk '{print $6}')"
status=0
for want in ./usr/bin/cfp ./usr/bin/cfp-explorer \
            ./usr/share/applications/io.github.cfp_explorer.CfpExplorer.desktop \
            ./usr/share/metainfo/io.github.cfp_explorer.CfpExplorer.metainfo.xml \
            ./usr/share/icons/hicolor/scalable/apps/io.github.cfp_explorer.CfpExplorer.svg \
            ./usr/share/cfp-explorer/hardware/h100-sxm.json; do
  if ! grep -qx -- "$want" <<<"$contents"; then
    echo "missing from $(basename "$deb"): $want"
    status=1
  fi
done
depends="$(dpkg-deb -f "$deb" Depends)"
for lib in libqt6widgets6 libqcustomplot2.1-qt6 libqt6svg6; do
  grep -q "$lib" <<<"$depends" || { echo "Depends lacks $lib: $depends"; status=1; }
done
echo "$(basename "$deb"): $(wc -l <<<"$contents") entries, Depends: $depends"
exit $status
