'use strict';
// The exact library versions these tests were written against (package-lock.json installs
// them). A different version may send other commands, so the tests refuse to run on it.

const fs = require('node:fs');
const path = require('node:path');

const PINNED = {
  redlock: 'v5.0.0-beta.2', // the published package.json spells its version with a "v"
  ioredis: '5.9.3',
  redis: '4.7.1',
  '@redis/client': '1.6.1',
  '@upstash/redis': '1.39.0',
  '@upstash/lock': 'v0.2.1', // also spelled with a "v"
  'redis-semaphore': '5.8.0',
  typescript: '5.9.3', // compiles the seed article's TypeScript in upstash.test.js
  'simple-redis-mutex': '2.1.0',
};

// Read from the package.json above the resolved entry point: redlock's "exports" field hides
// its package.json from require().
function installedVersion(name) {
  const entry = require.resolve(name);
  const marker = `${path.sep}node_modules${path.sep}${name.split('/').join(path.sep)}${path.sep}`;
  const root = entry.slice(0, entry.lastIndexOf(marker) + marker.length);
  return JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).version;
}

function requirePinnedVersions() {
  for (const [name, version] of Object.entries(PINNED)) {
    const found = installedVersion(name);
    if (found !== version) {
      throw new Error(`these tests pin ${name} ${version}, found ${found}`);
    }
  }
}

module.exports = { PINNED, requirePinnedVersions };
