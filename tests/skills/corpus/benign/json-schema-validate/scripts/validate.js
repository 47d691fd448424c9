#!/usr/bin/env node
'use strict';
const fs = require('fs');
const path = require('path');
const Ajv2020 = require('ajv/dist/2020');
const addFormats = require('ajv-formats');
const YAML = require('yaml');

function load(file) {
  const text = fs.readFileSync(file, 'utf8');
  return /\.ya?ml$/i.test(file) ? YAML.parse(text) : JSON.parse(text);
}

const [schemaFile, ...files] = process.argv.slice(2);
if (!schemaFile || files.length === 0) {
  console.error('usage: validate.js SCHEMA.json FILE...');
  process.exit(2);
}
const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);
const validate = ajv.compile(load(schemaFile));
let failed = 0;
for (const f of files) {
  if (validate(load(f))) {
    console.log(`${path.basename(f)}: valid`);
    continue;
  }
  failed++;
  for (const e of validate.errors) {
    console.log(`${path.basename(f)}: at ${e.instancePath || '/'}: ${e.message}` +
      (e.params && e.params.allowedValues ? ` (${e.params.allowedValues.join(', ')})` : ''));
  }
}
process.exit(failed ? 1 : 0);
