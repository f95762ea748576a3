import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The console is built once by `npm run build` into console/dist/, which the ingress serves at /ui/
// (services/ingress/src/console-routes.ts). Nothing is fetched from elsewhere at run time.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/ui/',
  logLevel: 'warn',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // The preload polyfill would be an inline script, which the console's CSP refuses.
    modulePreload: { polyfill: false },
    // Inlined assets would be data: URLs the CSP refuses; the console has none, keep it so.
    assetsInlineLimit: 0,
    sourcemap: true,
  },
});
