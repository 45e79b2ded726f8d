// esbuild.mjs compiles YAML imports to JSON at build time (see its yaml plugin).
declare module '*.yaml' {
  const value: unknown;
  export default value;
}
