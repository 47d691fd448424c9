// The peer: ajv (npm, compiled validators) on the benchmark's groups.
// Usage: node ajv.mjs GROUPS.json SECONDS-PER-GROUP [--filter OUT.json]
// With --filter, writes the cases ajv compiles to OUT.json and exits, so
// both contenders run the same work.
import { readFileSync, writeFileSync } from "node:fs";
import Ajv2020 from "ajv/dist/2020.js";

const [groupsFile, secondsArg, flag, out] = process.argv.slice(2);
const groups = JSON.parse(readFileSync(groupsFile, "utf8"));
const ajv = () => new Ajv2020({ strict: false, validateFormats: false, allowUnionTypes: true });

if (flag === "--filter") {
	const kept = [];
	for (const g of groups) {
		// cases ajv compiles and validates without throwing (it overflows
		// its stack on some reference cycles the suite has)
		const cases = g.cases.filter((c) => {
			try {
				const v = ajv().compile(c.schema);
				for (const i of c.instances) v(i);
				return true;
			} catch {
				return false;
			}
		});
		if (cases.length) kept.push({ name: g.name, cases });
	}
	writeFileSync(out, JSON.stringify(kept));
	process.exit(0);
}

const seconds = Number(secondsArg);
const result = {};
for (const g of groups) {
	const validators = g.cases.map((c) => [ajv().compile(c.schema), c.instances]);
	let n = 0, sink = 0;
	const t0 = process.hrtime.bigint(), limit = BigInt(Math.round(seconds * 1e9));
	while (process.hrtime.bigint() - t0 < limit) {
		for (const [v, instances] of validators)
			for (const i of instances) { sink += v(i) ? 1 : 0; n++; }
	}
	const s = Number(process.hrtime.bigint() - t0) / 1e9;
	result[g.name] = n / s;
	if (sink < 0) console.log(sink);
}
console.log(JSON.stringify(result));
