/**
 * The layer order of docs/design.md, enforced (npm run check:layers, run by CI): a module may
 * import from its own layer and the layers below it, never from one above; no import cycles.
 */
const layers = ['cli', 'server', 'jobs', 'runner', 'store', 'extractor', 'common', 'php', 'json'];

const climbs = layers.slice(1).map((layer, index) => ({
  name: `${layer}-stays-below`,
  comment: `src/${layer}/ sits below ${layers.slice(0, index + 1).join(', ')} (docs/design.md#layers)`,
  severity: 'error',
  from: { path: `^src/${layer}/` },
  to: { path: `^src/(${layers.slice(0, index + 1).join('|')})/` },
}));

module.exports = {
  forbidden: [
    ...climbs,
    {
      name: 'no-cycles',
      comment: 'an import cycle in src/ (type imports included)',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'product-not-tests',
      comment: 'product code never imports tests, benchmarks or scripts',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench|scripts)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
