#!/usr/bin/env node
/**
 * Empties dist/ before `tsc` writes it again. tsc never deletes: without this, a module renamed
 * or removed in src/ would live on in dist/ and be packed and published.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';

rmSync(path.resolve(import.meta.dirname, '../dist'), { recursive: true, force: true });
