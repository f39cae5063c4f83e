#!/usr/bin/env bash
# Sourced on a bare GPU machine with no network before scripts/device_check.sh runs prepared
# binaries (FAITHFUL_BIN_DIR): the Vulkan/EGL loaders from .deb files carried in .gl/ (see
# ../.library/device/README.md: `apt-get download libvulkan1 libegl1 ...` here), the NVIDIA ICD,
# XDG_RUNTIME_DIR, and the CLI at the path the test binaries were built with (tests/gpu_cli.rs
# runs env!("CARGO_BIN_EXE_faithful"), an absolute path of the build machine).
#
#   FAITHFUL_BUILT_AT=/work/main FAITHFUL_BIN_DIR=.devbin source scripts/device_env.sh
root=$(pwd)
if ls .gl/*.deb >/dev/null 2>&1; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
fi
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -e "$icd" ] && export VK_DRIVER_FILES="$icd"
egl=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
[ -e "$egl" ] && export __EGL_VENDOR_LIBRARY_FILENAMES="$egl"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/faithful-xdg-$(id -u)}"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
built=${FAITHFUL_BUILT_AT:-}
if [ -n "$built" ] && [ "$built" != "$root" ] && [ ! -e "$built" ]; then
    mkdir -p "$(dirname "$built")" && ln -s "$root" "$built"
fi
if [ -n "${FAITHFUL_BIN_DIR:-}" ]; then
    mkdir -p target/release && cp "$FAITHFUL_BIN_DIR/faithful" target/release/faithful
fi
