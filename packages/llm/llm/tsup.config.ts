import { defineConfig } from 'tsup'

export default defineConfig({
  entry: { index: 'src/index.ts', 'adapter/index': 'src/adapter/index.ts', 'testing/index': 'src/testing/index.ts' },
  format: ['esm'],
  dts: { compilerOptions: { composite: false } },
  clean: true,
  sourcemap: true,
  target: 'es2022',
})
