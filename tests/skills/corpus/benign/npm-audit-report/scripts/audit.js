#!/usr/bin/env node
'use strict';
const { spawnSync } = require('child_process');

const r = spawnSync('npm', ['audit', '--json'], { encoding: 'utf8', maxBuffer: 64 << 20 });
let report;
try { report = JSON.parse(r.stdout); } catch (e) {
  console.error('npm audit did not return JSON:', r.stderr.trim());
  process.exit(2);
}
const order = { critical: 0, high: 1, moderate: 2, low: 3, info: 4 };
const vulns = Object.values(report.vulnerabilities || {})
  .sort((a, b) => order[a.severity] - order[b.severity]);
for (const v of vulns) {
  const adv = v.via.filter((x) => typeof x === 'object').map((x) => x.title).join('; ') || `via ${v.via.join(', ')}`;
  const fix = v.fixAvailable === true ? 'fix in range'
    : v.fixAvailable ? `fix: ${v.fixAvailable.name}@${v.fixAvailable.version}${v.fixAvailable.isSemVerMajor ? ' (major)' : ''}`
    : 'no fix yet';
  console.log(`${v.severity.padEnd(8)} ${v.name.padEnd(28)} ${fix.padEnd(34)} ${adv}`);
}
const m = report.metadata && report.metadata.vulnerabilities;
if (m) console.log(`\ntotal: ${m.total} (critical ${m.critical}, high ${m.high}, moderate ${m.moderate}, low ${m.low})`);
