/** Loads `.env` when there is one (copy `.env.example`); variables already set in the environment win. */
import { existsSync } from 'node:fs';

if (existsSync('.env')) process.loadEnvFile('.env');
