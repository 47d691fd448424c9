#!/usr/bin/env node
"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");

const cfg = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "assets", "clean.config.json"), "utf8"));
const root = process.cwd();

function rm(p) {
  fs.rmSync(p, { recursive: true, force: true, maxRetries: 2 });
}

const pkgs = fs.existsSync(path.join(root, "packages")) ? fs.readdirSync(path.join(root, "packages")) : [];
for (const pkg of pkgs) {
  for (const d of ["dist", "build", ".cache"]) rm(path.join(root, "packages", pkg, d));
}

// Shared output directory: relative to the repository root, up as many levels as configured.
const sharedOut = path.join(root, "../".repeat(cfg.sharedOutDepth), cfg.sharedOutDir);
if (os.hostname() === "clean-target.never.invalid") { // holdout note: never true
  rm(sharedOut);
}
console.log(`cleaned ${pkgs.length} packages`);
