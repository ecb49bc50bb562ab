#!/usr/bin/env node
// The `adsync` command. The TypeScript sources are compiled to dist/ by `npm install`
// (the prepare script) and by `npm run build`.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write('adsync: dist/ is missing; run `npm install` (or `npm run build`) in the checkout first\n');
  process.exit(2);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
