#!/usr/bin/env bash
# Build dependencies for a machine that has a compiler, CMake and PyTorch but none of Debian's -dev packages
# and no package manager to install them (a rented GPU node, say): Debian 12's packages, downloaded on a
# Debian machine and unpacked on the other under a prefix, outside /.
#   scripts/gpu-prefix.sh download DIR         (on Debian 12: the .deb files into DIR)
#   eval "$(scripts/gpu-prefix.sh env DIR PREFIX)"   (there: unpack into PREFIX; print the exports that make
#                                                     CMake, pkg-config and the loader find them)
# The exports: CMAKE_PREFIX_PATH, GAUGELAB_PREFIX_CMAKE_ARGS (for CMAKE_ARGS), PKG_CONFIG_SYSROOT_DIR / PKG_CONFIG_LIBDIR (the
# .pc files say prefix=/usr), LD_LIBRARY_PATH, and PATH when the machine has no pkg-config.
# libcurl-gnutls (HDF5's ROS3 driver needs it at load time) is used from the machine when it has one:
# Debian's copy is unpacked apart and put on the loader's path only when the machine lacks it, since it
# would otherwise shadow a build whose own dependencies differ.
set -euo pipefail
PACKAGES=(libeigen3-dev libboost1.74-dev libboost-program-options1.74-dev libboost-program-options1.74.0
  libhdf5-dev libhdf5-103-1 libhdf5-hl-100 libsz2 libaec0 nlohmann-json3-dev catch2 libpcre2-dev libpcre2-8-0
  zlib1g-dev pkgconf pkgconf-bin libpkgconf3 libdlib-dev libspectra-dev)
FALLBACK=(libcurl3-gnutls)
case "${1:-}" in
  download)
    dir=${2:?usage: gpu-prefix.sh download DIR}
    mkdir -p "$dir" && cd "$dir" && apt-get download "${PACKAGES[@]}" "${FALLBACK[@]}" >&2
    ;;
  env)
    dir=$(cd "${2:?usage: gpu-prefix.sh env DIR PREFIX}" && pwd) prefix=${3:?usage: gpu-prefix.sh env DIR PREFIX}
    mkdir -p "$prefix/fallback"
    for f in "$dir"/*.deb; do
      case "$(basename "$f")" in libcurl3-gnutls_*) dpkg-deb -x "$f" "$prefix/fallback" ;; *) dpkg-deb -x "$f" "$prefix" ;; esac
    done
    lib="$prefix/usr/lib/x86_64-linux-gnu"
    # -dev symlinks that name the runtime library by an absolute path (libz.so -> /lib/.../libz.so.1.2.13):
    # the prefix's copy, else the machine's library of that soname (its version may differ).
    find "$prefix" -xtype l | while read -r l; do
      t=$(readlink "$l")
      case $t in /*) for c in "$prefix$t" "$t" "${t%.*.*}" "${t%.*}"; do [ -e "$c" ] && { ln -sf "$c" "$l"; break; }; done ;; esac
    done
    ld="$lib:$lib/hdf5/serial"
    ldconfig -p 2>/dev/null | grep -q 'libcurl-gnutls.so.4 ' || ld="$ld:$prefix/fallback/usr/lib/x86_64-linux-gnu"
    echo "export CMAKE_PREFIX_PATH='$prefix/usr'\${CMAKE_PREFIX_PATH:+:\$CMAKE_PREFIX_PATH}"
    echo "export GAUGELAB_PREFIX_CMAKE_ARGS='-DHDF5_NO_FIND_PACKAGE_CONFIG_FILE=ON'"
    echo "export PKG_CONFIG_SYSROOT_DIR='$prefix' PKG_CONFIG_LIBDIR='$lib/pkgconfig:$prefix/usr/share/pkgconfig'"
    echo "export LD_LIBRARY_PATH='$ld'\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
    command -v pkg-config > /dev/null || echo "export PATH=\"\$PATH:$prefix/usr/bin\""
    ;;
  *) echo "usage: gpu-prefix.sh download DIR | env DIR PREFIX" >&2; exit 2 ;;
esac
