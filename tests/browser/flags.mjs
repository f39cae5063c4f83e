// Chromium flags shared by the browser tests (web.test.mjs, npm.test.mjs).
// WebGPU in headless Chromium: --enable-unsafe-webgpu exposes navigator.gpu.requestAdapter() on
// Linux (where WebGPU is otherwise off), and Dawn then finds SwiftShader's Vulkan (shipped with
// Chromium) as a fallback adapter. The page must be a secure context: http://127.0.0.1 is.
export const FLAGS = [
  '--headless=new',
  '--no-sandbox',
  '--enable-unsafe-webgpu',
  '--enable-features=Vulkan',
  '--use-angle=swiftshader',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];
