#!/usr/bin/env node
// Node 20 cannot strip types, so the CLI registers tsx's loader before importing the TypeScript entry.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
