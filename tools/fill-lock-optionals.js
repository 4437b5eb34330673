// The npm registry this project installs from lacks other platforms' optional binaries
// (@swc/core-darwin-arm64, …), so `npm install` leaves them out of package-lock.json and
// `npm ci` then refuses the lock. This adds an entry for each missing optional dependency,
// marked optional with its platform, so `npm ci` accepts the lock and skips them here.
const fs = require('node:fs');
const path = require('node:path');

const file = path.join(__dirname, '..', 'package-lock.json');
const lock = JSON.parse(fs.readFileSync(file, 'utf8'));
const packages = lock.packages;
let added = 0;

const platformOf = (name) => {
  const os = ['darwin', 'linux', 'win32', 'freebsd', 'android', 'openbsd', 'sunos', 'aix', 'netbsd'].find((o) =>
    name.includes(o),
  );
  const cpu = ['arm64', 'x64', 'ia32', 'arm', 'ppc64', 's390x', 'riscv64', 'loong64', 'wasm32', 'mips64el'].find((c) =>
    new RegExp(`[-_]${c}([-_.]|$)`).test(name),
  );
  return { ...(os ? { os: [os] } : {}), ...(cpu ? { cpu: [cpu] } : {}) };
};

for (const [where, pkg] of Object.entries(packages)) {
  for (const [name, spec] of Object.entries(pkg.optionalDependencies ?? {})) {
    const nested = `${where ? `${where}/` : ''}node_modules/${name}`;
    const hoisted = `node_modules/${name}`;
    if (packages[nested] || packages[hoisted]) continue;
    packages[hoisted] = { version: spec.replace(/^[\^~=]/, ''), optional: true, ...platformOf(name) };
    added++;
  }
}
fs.writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
process.stdout.write(`added ${added} optional platform entries to package-lock.json\n`);
