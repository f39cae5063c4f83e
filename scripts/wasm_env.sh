# Sourced by the wasm/browser scripts: the wasm target, wasm-bindgen-cli at exactly the
# version in Cargo.lock, and Debian's Chromium + ChromeDriver.
wb_version=$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/version = |"/, ""); print; exit}' Cargo.lock)
rustup target add wasm32-unknown-unknown >/dev/null
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$wb_version" ]; then
    cargo install wasm-bindgen-cli --version "$wb_version"
fi
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
        apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver
    else
        sudo apt-get update -q && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver
    fi
fi
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/faithful-xdg-$(id -u)}"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
