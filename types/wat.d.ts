// esbuild.mjs assembles WAT imports into WebAssembly bytes at build time (see its wat plugin).
declare module '*.wat' {
  const bytes: Uint8Array<ArrayBuffer>;
  export default bytes;
}
