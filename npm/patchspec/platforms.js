// The per-platform packages of patchspec: `${process.platform}-${process.arch}`
// to the package that carries that binary. One entry per optionalDependency
// in package.json (test/launcher.test.js checks they agree).
export const PLATFORMS = {
  "linux-x64": "patchspec-linux-x64",
};

/** The package holding the binary for this platform and architecture, or undefined. */
export function binaryPackage(platform, arch) {
  return PLATFORMS[`${platform}-${arch}`];
}
