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
# Every failure prints one line naming the step that failed and exits non-zero, and the exports are printed only
# after every step succeeded: a caller's `eval "$(gpu-prefix.sh env ...)"` then sets nothing, so it checks that
# CMAKE_PREFIX_PATH names PREFIX afterwards (scripts/gpu-bench.sh does).
set -euo pipefail
PACKAGES=(libeigen3-dev libboost1.74-dev libboost-program-options1.74-dev libboost-program-options1.74.0
  libhdf5-dev libhdf5-103-1 libhdf5-hl-100 libsz2 libaec0 nlohmann-json3-dev catch2 libpcre2-dev libpcre2-8-0
  zlib1g-dev pkgconf pkgconf-bin libpkgconf3 libdlib-dev libspectra-dev)
FALLBACK=(libcurl3-gnutls)
step="reading the arguments"
trap 'echo "gpu-prefix: failed while $step" >&2' ERR
unpack() {  # DEB DIR: dpkg-deb where the machine has it, else ar + tar (a .deb is an ar archive holding data.tar.*)
  if command -v dpkg-deb > /dev/null; then dpkg-deb -x "$1" "$2"; return; fi
  local member; member=$(ar t "$1" | grep -m1 '^data\.tar')
  case $member in
    *.xz) ar p "$1" "$member" | tar -xJf - -C "$2" ;;
    *.zst) ar p "$1" "$member" | tar --zstd -xf - -C "$2" ;;
    *.gz) ar p "$1" "$member" | tar -xzf - -C "$2" ;;
    *) ar p "$1" "$member" | tar -xf - -C "$2" ;;
  esac
}
case "${1:-}" in
  download)
    dir=${2:?usage: gpu-prefix.sh download DIR}
    step="downloading into $dir"
    mkdir -p "$dir" && cd "$dir" && apt-get download "${PACKAGES[@]}" "${FALLBACK[@]}" >&2
    ;;
  env)
    step="reading DIR ${2:-}"
    dir=$(cd "${2:?usage: gpu-prefix.sh env DIR PREFIX}" 2>/dev/null && pwd) prefix=${3:?usage: gpu-prefix.sh env DIR PREFIX}
    debs=("$dir"/*.deb)
    [ -e "${debs[0]}" ] || { echo "gpu-prefix: no .deb files in $dir (gpu-prefix.sh download DIR on Debian 12)" >&2; exit 1; }
    step="creating $prefix"
    mkdir -p "$prefix/fallback"
    for f in "${debs[@]}"; do
      step="unpacking $(basename "$f")"
      case "$(basename "$f")" in libcurl3-gnutls_*) unpack "$f" "$prefix/fallback" ;; *) unpack "$f" "$prefix" ;; esac
    done
    lib="$prefix/usr/lib/x86_64-linux-gnu"
    # -dev symlinks that name the runtime library by an absolute path (libz.so -> /lib/.../libz.so.1.2.13):
    # the prefix's copy, else the machine's library of that soname (its version may differ). A link that
    # resolves nowhere is left as it is and named on stderr (the build fails later only if it needs it).
    step="relinking the absolute symlinks under $prefix"
    while read -r l; do
      t=$(readlink "$l")
      case $t in /*) ;; *) continue ;; esac
      found=
      for c in "$prefix$t" "$t" "${t%.*.*}" "${t%.*}"; do
        if [ -e "$c" ]; then ln -sf "$c" "$l"; found=1; break; fi
      done
      [ -n "$found" ] || echo "gpu-prefix: $l -> $t resolves nowhere (left as it is)" >&2
    done < <(find "$prefix" -xtype l)
    step="checking the unpacked prefix"
    for need in "$prefix/usr/include/eigen3/Eigen/Core" "$lib/pkgconfig" "$lib/hdf5/serial"; do
      [ -e "$need" ] || { echo "gpu-prefix: $need is missing after unpacking $dir (a package not downloaded?)" >&2; exit 1; }
    done
    ld="$lib:$lib/hdf5/serial"
    { ldconfig -p 2>/dev/null || true; } | grep -q 'libcurl-gnutls.so.4 ' || ld="$ld:$prefix/fallback/usr/lib/x86_64-linux-gnu"
    echo "export CMAKE_PREFIX_PATH='$prefix/usr'\${CMAKE_PREFIX_PATH:+:\$CMAKE_PREFIX_PATH}"
    echo "export GAUGELAB_PREFIX_CMAKE_ARGS='-DHDF5_NO_FIND_PACKAGE_CONFIG_FILE=ON'"
    echo "export PKG_CONFIG_SYSROOT_DIR='$prefix' PKG_CONFIG_LIBDIR='$lib/pkgconfig:$prefix/usr/share/pkgconfig'"
    echo "export LD_LIBRARY_PATH='$ld'\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
    command -v pkg-config > /dev/null || echo "export PATH=\"\$PATH:$prefix/usr/bin\""
    ;;
  *) echo "usage: gpu-prefix.sh download DIR | env DIR PREFIX" >&2; exit 2 ;;
esac
