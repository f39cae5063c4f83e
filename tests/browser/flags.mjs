// Headless Chromium as the browser tests (web.test.mjs, npm.test.mjs) and the browser benchmark
// (benches/npm_session_browser.mjs) launch it.
// WebGPU in headless Chromium: --enable-unsafe-webgpu exposes navigator.gpu.requestAdapter() on
// Linux (where WebGPU is otherwise off), and Dawn then finds SwiftShader's Vulkan (shipped with
// Chromium) as a fallback adapter. The page must be a secure context: http://127.0.0.1 is.
import { chromium } from 'playwright-core';

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

/** Debian's Chromium ($CHROMIUM, default /usr/bin/chromium) with FLAGS; never a downloaded browser. */
export const launchChromium = (executablePath = process.env.CHROMIUM ?? '/usr/bin/chromium') =>
  chromium.launch({ executablePath, headless: true, args: FLAGS, timeout: 120_000 });
