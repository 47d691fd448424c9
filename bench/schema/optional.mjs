// The peer on JSON Schema's optional tests: ajv (draft-07 or 2020-12,
// with ajv-formats asserting formats) on the same files toolgate runs, one
// line a file: "FILE PASSED FAILED". A file ajv cannot read or compile a
// test of counts that test as failed.
// Usage: node optional.mjs 7|2020 FILE...
import { readFileSync } from "node:fs";
import Ajv7 from "ajv";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const Ajv = process.argv[2] === "2020" ? Ajv2020 : Ajv7;
for (const file of process.argv.slice(3)) {
	let passed = 0, failed = 0, groups;
	try {
		groups = JSON.parse(readFileSync(file, "utf8"));
	} catch {
		console.log(`${file} 0 1`);
		continue;
	}
	for (const g of groups) {
		let validate = null;
		try {
			const ajv = new Ajv({ strict: false, allowUnionTypes: true, logger: false });
			addFormats(ajv);
			validate = ajv.compile(g.schema);
		} catch {
			failed += g.tests.length;
			continue;
		}
		for (const t of g.tests) {
			let ok;
			try {
				ok = validate(t.data) === t.valid;
			} catch {
				ok = false;
			}
			if (ok) passed++;
			else failed++;
		}
	}
	console.log(`${file} ${passed} ${failed}`);
}
