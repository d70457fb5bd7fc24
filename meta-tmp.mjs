import { build } from 'esbuild';
const r = await build({ entryPoints: { main: 'dist/src/cli/main.js' }, outdir: '/tmp/prof/metaout', bundle: true, splitting: true, format: 'esm', platform: 'node', target: 'node20', metafile: true, logLevel: 'error', external: ['better-sqlite3', 'pg', 'fastify', 'locutus', 'ajv'], write: false });
const ins = r.metafile.inputs;
const roots = process.argv.slice(2);
const seen = new Map(); const st = roots.map(r=>[r,null]);
while (st.length){ const [k,from]=st.pop(); if(seen.has(k)) continue; seen.set(k,from); for (const im of ins[k]?.imports??[]) if ((im.kind==='import-statement'||im.kind==='require-call') && ins[im.path]) st.push([im.path,k]); }
let total=0; const byPkg=new Map();
for (const k of seen.keys()){ const b=ins[k].bytes; total+=b; const m=k.match(/node_modules\/((@[^/]+\/)?[^/]+)/); const p=m?m[1]:k.replace(/\/[^/]+$/,''); byPkg.set(p,(byPkg.get(p)??0)+b); }
console.log('closure input bytes', total);
for (const [p,b] of [...byPkg].sort((a,b)=>b[1]-a[1]).slice(0,30)) console.log(String(b).padStart(8), p);
const chain = (k)=>{ const c=[]; while(k){c.push(k); k=seen.get(k);} return c.reverse().join('\n   <- '); };
for (const probe of ['store/tables/index.js','store/tables/table-loader.js']) { const k=[...seen.keys()].find(x=>x.includes(probe.split('/').slice(-2).join('/'))); if (k) console.log('CHAIN', chain(k)); }
for (const k of seen.keys()) if (k.includes('store/tables/') ) console.log('T', k, '<-', seen.get(k));
