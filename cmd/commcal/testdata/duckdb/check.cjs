'use strict';
// node check.cjs SPEC.json NODE_MODULES
//
// The second, independent Parquet reader of TestParquetOutputsInterop: DuckDB (the npm
// package @duckdb/node-api, found in NODE_MODULES) reads every Parquet file SPEC lists and
// compares its columns' names and DuckDB types (BOOLEAN, BIGINT, DOUBLE, VARCHAR) and every
// value with what commcal wrote. SPEC is a JSON list of
//   {"file": PATH, "table": NAME, "columns": [{"name": N, "type": T}, ...], "rows": [[...], ...]}
// with every value as text: integers in decimal, floats as Go's strconv 'g' -1 (+Inf, -Inf,
// NaN), booleans as true and false. Prints a line per file; exits 1 listing the mismatches.
const fs = require('fs');
const path = require('path');

const [specPath, modules] = process.argv.slice(2);
const { DuckDBInstance } = require(path.join(modules, '@duckdb', 'node-api'));

// want converts a text value of the spec into what DuckDB returns for the type.
function want(type, s) {
  switch (type) {
    case 'BIGINT': return BigInt(s);
    case 'DOUBLE':
      if (s === '+Inf') return Infinity;
      if (s === '-Inf') return -Infinity;
      if (s === 'NaN') return NaN;
      return Number(s); // Go's shortest form parses back to the same double
    case 'BOOLEAN': return s === 'true';
    default: return s;
  }
}

async function main() {
  const spec = JSON.parse(fs.readFileSync(specPath, 'utf8'));
  const db = await DuckDBInstance.create(':memory:', { threads: '1' });
  const con = await db.connect();
  const problems = [];
  const problem = (msg) => { if (problems.length < 30) problems.push(msg); };
  for (const f of spec) {
    const name = `${f.table} (${f.file})`;
    let r;
    try {
      r = await con.runAndReadAll('SELECT * FROM read_parquet($1)', [f.file]);
    } catch (e) {
      problem(`${name}: DuckDB cannot read it: ${e.message}`);
      continue;
    }
    const names = r.columnNames();
    const types = r.columnTypes().map(String);
    const wantNames = f.columns.map((c) => c.name);
    const wantTypes = f.columns.map((c) => c.type);
    if (names.join(',') !== wantNames.join(',')) {
      problem(`${name}: columns ${names.join(',')}, want ${wantNames.join(',')}`);
      continue;
    }
    let ok = true;
    types.forEach((t, j) => {
      if (t !== wantTypes[j]) {
        problem(`${name}: column ${names[j]} is ${t}, want ${wantTypes[j]}`);
        ok = false;
      }
    });
    const rows = r.getRows();
    if (rows.length !== f.rows.length) {
      problem(`${name}: ${rows.length} rows, want ${f.rows.length}`);
      ok = false;
    }
    for (let i = 0; ok && i < rows.length; i++) {
      for (let j = 0; j < names.length; j++) {
        const w = want(wantTypes[j], f.rows[i][j]);
        if (!Object.is(rows[i][j], w)) {
          problem(`${name}: row ${i + 1}, column ${names[j]}: DuckDB read ${String(rows[i][j])}, commcal wrote ${f.rows[i][j]}`);
          ok = false;
          break;
        }
      }
    }
    if (ok) {
      console.log(`ok ${f.table} ${f.file}: ${rows.length} rows; ${names.map((n, j) => `${n} ${types[j]}`).join(', ')}`);
    }
  }
  if (problems.length > 0) {
    for (const p of problems) console.error(p);
    process.exit(1);
  }
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : String(e));
  process.exit(1);
});
