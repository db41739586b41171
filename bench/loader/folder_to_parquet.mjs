// Converts an image folder + captions.jsonl into one HF-style parquet file (image struct {bytes, path} +
// image_description string; SNAPPY; 100-row groups as HF `datasets` writes images), so bench-loader can read
// the same images from loose files and from parquet side by side. Written by parquet-wasm (an independent writer).
//   npm install --prefix /tmp/pqref apache-arrow parquet-wasm
//   node bench/loader/folder_to_parquet.mjs DATA_DIR OUT.parquet [/tmp/pqref]
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
const [dataDir, outFile, prefix] = [process.argv[2], process.argv[3], process.argv[4] || '/tmp/pqref'];
const require = createRequire(prefix + '/');
const arrow = require('apache-arrow');
const pw = require('parquet-wasm');
const lines = readFileSync(join(dataDir, 'captions.jsonl'), 'utf8').split('\n').filter((l) => l.trim());
const cache = new Map();
const images = [], captions = [];
for (const line of lines) {
  const row = JSON.parse(line);
  if (!cache.has(row.image)) cache.set(row.image, new Uint8Array(readFileSync(join(dataDir, row.image))));
  images.push({ bytes: cache.get(row.image), path: row.image });
  captions.push(row.caption);
}
const struct = new arrow.Struct([new arrow.Field('bytes', new arrow.Binary(), true), new arrow.Field('path', new arrow.Utf8(), true)]);
const table = new arrow.Table({ image: arrow.vectorFromArray(images, struct), image_description: arrow.vectorFromArray(captions, new arrow.Utf8()) });
const props = new pw.WriterPropertiesBuilder().setCompression(pw.Compression.SNAPPY).setDictionaryEnabled(false)
  .setMaxRowGroupSize(100).setDataPageSizeLimit(1 << 20).build();
writeFileSync(outFile, pw.writeParquet(pw.Table.fromIPCStream(arrow.tableToIPC(table, 'stream')), props));
console.log(`${outFile}: ${images.length} rows, ${cache.size} distinct images`);
