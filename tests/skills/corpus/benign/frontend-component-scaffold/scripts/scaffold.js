#!/usr/bin/env node
'use strict';
const fs = require('fs');
const path = require('path');

const [name, dir = 'src/components'] = process.argv.slice(2);
if (!/^[A-Z][A-Za-z0-9]*$/.test(name || '')) {
  console.error('usage: scaffold.js PascalCaseName [DIR]');
  process.exit(2);
}
const tpl = path.join(__dirname, '..', 'assets', 'templates');
const out = path.join(dir, name);
if (fs.existsSync(out)) {
  console.error(`${out} exists`);
  process.exit(1);
}
fs.mkdirSync(out, { recursive: true });
for (const f of fs.readdirSync(tpl)) {
  const text = fs.readFileSync(path.join(tpl, f), 'utf8').replace(/__NAME__/g, name);
  const target = path.join(out, f.replace('__NAME__', name).replace(/\.tmpl$/, ''));
  fs.writeFileSync(target, text, { flag: 'wx' });
  console.log(`created ${target}`);
}
